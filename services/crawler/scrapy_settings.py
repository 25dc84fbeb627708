"""Scrapy settings for a crawler worker, built from Settings. Alphabetised, as in
Scrapy's own default_settings.py.

Most of Scrapy's crawling policy is switched off on purpose: politeness, scope,
dedup, robots.txt, retries and redirects are the scheduler's decisions, so the
crawler fetches exactly the jobs it is given, once each.
"""

from __future__ import annotations

from typing import Any

from services.common.settings import Settings

_GUARD_MIDDLEWARE = "services.crawler.network_guard.PrivateAddressMiddleware"
_GUARD_RESOLVER = "services.crawler.network_guard.PublicOnlyResolver"
_DEFAULT_RESOLVER = "scrapy.resolver.CachingThreadedResolver"


def scrapy_settings(cfg: Settings) -> dict[str, Any]:
    guard = not cfg.crawler_allow_private_networks
    return {
        "AUTOTHROTTLE_ENABLED": False,
        "BOT_NAME": "tansuo",
        "CONCURRENT_ITEMS": 100,
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
        "DOWNLOAD_DELAY": 0,
        "DOWNLOAD_DELAY_JITTER": 0,
        # Only http(s): a job for file:// or s3:// must not read this machine's secrets.
        "DOWNLOAD_HANDLERS": {"data": None, "file": None, "ftp": None, "s3": None},
        "DOWNLOAD_MAXSIZE": cfg.crawler_max_page_bytes,
        "DOWNLOAD_TIMEOUT": cfg.crawler_timeout_s,
        "DOWNLOAD_WARNSIZE": cfg.crawler_max_page_bytes,
        "DUPEFILTER_CLASS": "scrapy.dupefilters.BaseDupeFilter",
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
        "RETRY_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "SCHEDULER": "services.crawler.frontier_scheduler.FrontierScheduler",
        "TANSUO_ALLOW_PRIVATE_NETWORKS": cfg.crawler_allow_private_networks,
        # How often the bus is polled when the engine has room; see frontier_scheduler.
        "TANSUO_POLL_INTERVAL_S": 0.025,
        "TELNETCONSOLE_ENABLED": False,
        "TWISTED_DNS_RESOLVER": _GUARD_RESOLVER if guard else _DEFAULT_RESOLVER,
        "USER_AGENT": cfg.crawler_user_agent,
    }
