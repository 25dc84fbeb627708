"""Scrapy settings for a crawler worker, built from Settings. Alphabetised, as in
Scrapy's own default_settings.py.

Most of Scrapy's crawling policy is switched off on purpose: politeness, scope,
dedup, robots.txt, retries and redirects are the scheduler's decisions, so the
crawler fetches exactly the jobs it is given, once each.
"""

from __future__ import annotations

from typing import Any

from services.common.config import Settings

_GUARD_MIDDLEWARE = "services.crawler.network_guard.PrivateAddressMiddleware"
_GUARD_RESOLVER = "services.crawler.network_guard.PublicOnlyResolver"
_DEFAULT_RESOLVER = "scrapy.resolver.CachingThreadedResolver"

# Scrapy's components, each named with its priority in Scrapy's defaults, reduced to
# those a crawler that fetches exactly the jobs it is given needs: scope, robots.txt,
# retries, redirects, cookies and depth are the scheduler's, and nothing reads
# Scrapy's stats. The *_BASE settings are replaced, not overridden with None:
# Scrapy imports every class a components dict names, None or not, and each one it
# keeps wraps every request, response or spider output even when it does nothing.
# RemoteControl (on by default since Scrapy 2.19) would also import aiohttp, serve a
# code-running HTTP endpoint on localhost and write a job file into the home
# directory, from every crawler process.
_DOWNLOADER_MIDDLEWARES = {
    "scrapy.downloadermiddlewares.downloadtimeout.DownloadTimeoutMiddleware": 350,
    "scrapy.downloadermiddlewares.defaultheaders.DefaultHeadersMiddleware": 400,
    "scrapy.downloadermiddlewares.useragent.UserAgentMiddleware": 500,
    # Accept-Encoding, and DOWNLOAD_MAXSIZE applied to the decompressed body.
    "scrapy.downloadermiddlewares.httpcompression.HttpCompressionMiddleware": 590,
    # robots.txt read up to its own cap (RFC 9309 2.5), not refused at the page cap.
    "services.crawler.robots_size.RobotsSizeMiddleware": 595,
    "scrapy.downloadermiddlewares.httpproxy.HttpProxyMiddleware": 750,
}
# Start requests only (the spider has none, but Scrapy expects it); with
# HTTPERROR_ALLOW_ALL every status reaches the spider, as it did through HttpErrorMiddleware.
_SPIDER_MIDDLEWARES = {"scrapy.spidermiddlewares.start.StartSpiderMiddleware": 25}


def _max_size(cfg: Settings) -> int:
    return max(cfg.crawler_max_page_bytes, cfg.documents_max_bytes if cfg.documents_enabled else 0)


def scrapy_settings(cfg: Settings) -> dict[str, Any]:
    guard = not cfg.crawler_allow_private_networks
    return {
        "AUTOTHROTTLE_ENABLED": False,
        "BOT_NAME": "tansuo",
        # The spider yields one item per response, but Scrapy starts this many asyncio
        # tasks for every response's output: at 100 (its default) they were about a
        # third of Scrapy's CPU per page.
        "CONCURRENT_ITEMS": 1,
        "CONCURRENT_REQUESTS": cfg.crawler_concurrency,
        # The scheduler already limits each host; a second limit here would only stall.
        "CONCURRENT_REQUESTS_PER_DOMAIN": cfg.crawler_concurrency,
        "COOKIES_ENABLED": False,
        "DEFAULT_REQUEST_HEADERS": {
            "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
            "Accept-Language": "zh-CN,zh;q=0.9,zh-TW;q=0.8,en;q=0.5",
        },
        "DNS_TIMEOUT": cfg.crawler_timeout_s,
        "DOWNLOADER_MIDDLEWARES": {_GUARD_MIDDLEWARE: 50} if guard else {},
        "DOWNLOADER_MIDDLEWARES_BASE": _DOWNLOADER_MIDDLEWARES,
        "DOWNLOADER_STATS": False,
        "DOWNLOAD_DELAY": 0,
        "DOWNLOAD_DELAY_JITTER": 0,
        # Only http(s): a job for file:// or s3:// must not read this machine's secrets.
        "DOWNLOAD_HANDLERS": {"data": None, "file": None, "ftp": None, "s3": None},
        # The larger cap; each response gets its own once its type is known (the spider's
        # _size_cap): a document may be larger than a page.
        "DOWNLOAD_MAXSIZE": _max_size(cfg),
        "DOWNLOAD_TIMEOUT": cfg.crawler_timeout_s,
        "DOWNLOAD_WARNSIZE": _max_size(cfg),
        "DUPEFILTER_CLASS": "scrapy.dupefilters.BaseDupeFilter",
        "EXTENSIONS_BASE": {},
        "HTTPCACHE_ENABLED": False,
        "HTTPERROR_ALLOW_ALL": True,
        "ITEM_PIPELINES": {"services.crawler.page_publisher.PublishPipeline": 100},
        # The CLI draws a progress bar; Scrapy's INFO lines would tear it apart.
        "LOG_LEVEL": "WARNING",
        "LOGSTATS_INTERVAL": 0,
        "METAREFRESH_ENABLED": False,
        # DNS lookups run in this pool; too few threads serialise a broad crawl.
        "REACTOR_THREADPOOL_MAXSIZE": max(10, cfg.crawler_concurrency),
        "REDIRECT_ENABLED": False,
        "REFERER_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        "RETRY_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "SCHEDULER": "services.crawler.frontier_scheduler.FrontierScheduler",
        "SPIDER_MIDDLEWARES_BASE": _SPIDER_MIDDLEWARES,
        # Nothing reads Scrapy's stats (the worker keeps its own and Prometheus's);
        # the memory collector would count every request and response in dicts.
        "STATS_CLASS": "scrapy.statscollectors.DummyStatsCollector",
        "TANSUO_ALLOW_PRIVATE_NETWORKS": cfg.crawler_allow_private_networks,
        # How often the bus is polled when the engine has room; see frontier_scheduler.
        "TANSUO_POLL_INTERVAL_S": 0.01,
        "TELNETCONSOLE_ENABLED": False,
        "TWISTED_DNS_RESOLVER": _GUARD_RESOLVER if guard else _DEFAULT_RESOLVER,
        "USER_AGENT": cfg.crawler_user_agent,
        # Scrapy checks each response's callback for a generator returning a value by
        # reading its source with ast; its cache is keyed by the bound method, a new
        # object per request, so it would parse the spider's source for every page
        # (docs/benchmarks.md, 'Third round (issue 12)'). Our one callback returns
        # nothing (tests/unit/test_scrapy_settings.py).
        "WARN_ON_GENERATOR_RETURN_VALUE": False,
    }
