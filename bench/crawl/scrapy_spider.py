"""The baseline of issue 12: a plain Scrapy spider that fetches a site and extracts
what a search engine needs from each page, and nothing else.

It follows every link under the start URL's origin (Scrapy's LinkExtractor), and takes
each page's title and body text (XPath over Scrapy's own parsel selector), so that
it pays for fetching, parsing and extracting as Tansuo's crawler does, without
storing, indexing or ranking anything. It keeps Scrapy's defaults where Tansuo keeps
its own equivalents: 16 concurrent requests, its duplicate filter, no robots.txt
(Tansuo's robots.txt and sitemap are not counted as pages by the benchmarks).

    .venv/bin/python -m bench.crawl.scrapy_spider http://127.0.0.1:8000/
"""

from __future__ import annotations

import re
import sys
from urllib.parse import urlsplit

import scrapy
from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor


class SiteSpider(scrapy.Spider):
    name = "site"

    def __init__(self, start: str, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.start_urls = [start]
        # By URL prefix, not allow_domains: that compares the host *with its port*
        # against the names given, so a site on 127.0.0.1:PORT would match nothing.
        origin = "{0.scheme}://{0.netloc}/".format(urlsplit(start))
        self.links = LinkExtractor(allow=(f"^{re.escape(origin)}",))
        self.pages = 0

    def parse(self, response):  # type: ignore[no-untyped-def]  # Scrapy's callback protocol
        if not isinstance(response, scrapy.http.TextResponse):
            return
        title = response.xpath("normalize-space(//title)").get()
        body = " ".join(t.strip() for t in response.xpath("//body//text()[not(ancestor::script)]").getall())
        self.pages += bool(title or body)
        for link in self.links.extract_links(response):
            yield response.follow(link.url, callback=self.parse)


def main(argv: list[str]) -> int:
    process = CrawlerProcess({"LOG_LEVEL": "WARNING", "TELNETCONSOLE_ENABLED": False, "ROBOTSTXT_OBEY": False,
                              "CONCURRENT_REQUESTS": 16, "CONCURRENT_REQUESTS_PER_DOMAIN": 16})  # fmt: skip
    process.crawl(SiteSpider, start=argv[0])
    process.start()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
