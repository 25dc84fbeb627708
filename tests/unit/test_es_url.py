"""TANSUO_INDEX URLs for the Elasticsearch adapter."""

from __future__ import annotations

import pytest

from services.common.adapters.elasticsearch.search_index import parse_url


def test_a_plain_url_names_one_node_on_the_default_port_and_the_alias() -> None:
    assert parse_url("elasticsearch://es/tansuo") == (["http://es:9200"], "tansuo", {})


def test_the_s_scheme_means_https_with_credentials_and_a_ca() -> None:
    nodes, alias, options = parse_url("elasticsearchs://app:p%40ss%3Aw@es1:9201,es2/tansuo?ca_certs=/etc/ca.pem")
    assert nodes == ["https://es1:9201", "https://es2:9200"]
    assert alias == "tansuo"
    assert options == {"basic_auth": ("app", "p@ss:w"), "ca_certs": "/etc/ca.pem"}


def test_ipv6_hosts_keep_their_brackets() -> None:
    assert parse_url("elasticsearch://[::1]/t")[0] == ["http://[::1]:9200"]
    assert parse_url("elasticsearch://[::1]:9201/t")[0] == ["http://[::1]:9201"]


def test_verification_can_be_switched_off() -> None:
    assert parse_url("elasticsearchs://es/t?verify_certs=false")[2] == {"verify_certs": False}


@pytest.mark.parametrize(
    "url",
    [
        "http://es:9200/tansuo",  # a scheme of its own, so TANSUO_INDEX says which backend
        "elasticsearch://es:9200/",  # no alias
        "elasticsearch://es:9200/Tansuo",  # index names are lower-case
        "elasticsearch://es:9200/a/b",
        "elasticsearch://es:9200/_tansuo",
        "elasticsearch:///tansuo",  # no host
        "elasticsearch://es/tansuo?timeout=5",  # unknown parameter
    ],
)
def test_malformed_urls_fail_at_start_up(url: str) -> None:
    with pytest.raises(ValueError, match="TANSUO_INDEX"):
        parse_url(url)
