"""The crawler's Scrapy settings: what each one turns off stays off."""

from pathlib import Path

from scrapy.settings import Settings as ScrapySettings
from scrapy.utils.conf import build_component_list

from services.common.config import Settings
from services.crawler.scrapy_settings import scrapy_settings


def _components(name: str) -> list[str]:
    settings = ScrapySettings(scrapy_settings(Settings(data_dir=Path("unused"))))
    return [c if isinstance(c, str) else f"{c.__module__}.{c.__name__}" for c in
            build_component_list(settings.getwithbase(name))]


def test_no_extension_is_loaded_not_even_remote_control():
    # RemoteControl (Scrapy 2.19) would serve code execution on localhost and write a job file.
    assert _components("EXTENSIONS") == []


def test_only_the_downloader_middlewares_a_job_needs_are_loaded():
    assert _components("DOWNLOADER_MIDDLEWARES") == [
        "services.crawler.network_guard.PrivateAddressMiddleware",
        "scrapy.downloadermiddlewares.downloadtimeout.DownloadTimeoutMiddleware",
        "scrapy.downloadermiddlewares.defaultheaders.DefaultHeadersMiddleware",
        "scrapy.downloadermiddlewares.useragent.UserAgentMiddleware",
        "scrapy.downloadermiddlewares.httpcompression.HttpCompressionMiddleware",
        "services.crawler.robots_size.RobotsSizeMiddleware",
        "scrapy.downloadermiddlewares.httpproxy.HttpProxyMiddleware",
    ]


def test_spider_output_is_not_fanned_out_to_a_hundred_workers():
    # The spider yields one outcome (or one robots.txt redirect) per response; Scrapy
    # starts CONCURRENT_ITEMS asyncio tasks for every response's output.
    cfg = scrapy_settings(Settings(data_dir=Path("unused")))
    assert cfg["CONCURRENT_ITEMS"] == 1
    assert _components("SPIDER_MIDDLEWARES") == ["scrapy.spidermiddlewares.start.StartSpiderMiddleware"]


def test_the_per_response_callback_source_check_is_off_and_not_needed():
    # Scrapy's check re-read the callback's source for every page (its cache is keyed
    # by the bound method); it is off, so our callbacks must never return a value.
    from scrapy.utils.misc import is_generator_with_return_value

    from services.crawler.spider import TansuoSpider

    assert scrapy_settings(Settings(data_dir=Path("unused")))["WARN_ON_GENERATOR_RETURN_VALUE"] is False
    for callback in (TansuoSpider.parse, TansuoSpider.on_error):
        assert not is_generator_with_return_value(callback)
