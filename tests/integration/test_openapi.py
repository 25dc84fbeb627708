"""services/api/openapi.json is the API's contract: every route of the app is in it
and nothing else, it validates against the OpenAPI 3.1 schema, the token-guarded
views are exactly the operations it marks as needing the token, and /api/docs
renders it from Tansuo's own files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from openapi_spec_validator import OpenAPIV31SpecValidator, validate

from services.api.api_docs import openapi_document
from services.api.app import create_app
from services.common.bootstrap import build_search_index
from services.common.config import Settings

IGNORED_METHODS = {"HEAD", "OPTIONS"}  # answered by werkzeug for every GET route


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory):  # a Flask app
    cfg = Settings(data_dir=tmp_path_factory.mktemp("openapi"))
    return create_app(cfg, index=build_search_index(cfg))


def _app_operations(app) -> dict[tuple[str, str], str]:
    """(METHOD, OpenAPI path) -> Flask endpoint, for every route the app exposes."""
    operations = {}
    for rule in app.url_map.iter_rules():
        path = re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule.rule)
        for method in rule.methods - IGNORED_METHODS:
            operations[(method, path)] = rule.endpoint
    return operations


def _spec_operations() -> dict[tuple[str, str], dict]:
    return {
        (method.upper(), path): op
        for path, item in openapi_document()["paths"].items()
        for method, op in item.items()
    }


def test_every_route_of_the_app_is_in_the_document_and_nothing_else(app) -> None:
    in_app, in_spec = set(_app_operations(app)), set(_spec_operations())
    assert not in_app - in_spec, f"routes missing from services/api/openapi.json: {sorted(in_app - in_spec)}"
    assert not in_spec - in_app, f"operations the app does not have: {sorted(in_spec - in_app)}"


def test_the_document_validates_against_the_openapi_3_1_schema() -> None:
    document = openapi_document()
    assert document["openapi"].startswith("3.1.")
    validate(document, cls=OpenAPIV31SpecValidator)


def test_the_operations_that_need_the_token_are_the_guarded_views(app) -> None:
    spec = _spec_operations()
    for key, endpoint in _app_operations(app).items():
        guarded = getattr(app.view_functions[endpoint], "tansuo_requires_token", False)
        says = bool(spec[key].get("security"))
        assert guarded == says, f"{key}: the view {'is' if guarded else 'is not'} guarded, the document disagrees"
        if guarded:
            assert {"401", "403"} <= set(spec[key]["responses"]), key


def test_every_operation_has_an_id_a_summary_and_a_tag() -> None:
    ids = [op["operationId"] for op in _spec_operations().values()]
    assert len(ids) == len(set(ids))
    assert all(op.get("summary") and op.get("tags") for op in _spec_operations().values())


def test_the_json_and_the_reference_page_are_served_without_anything_from_elsewhere(app) -> None:
    client = app.test_client()
    served = client.get("/api/openapi.json")
    assert served.status_code == 200 and served.get_json() == openapi_document()
    page = client.get("/api/docs")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets and all(a.startswith("/") for a in assets), f"only Tansuo's own files: {assets}"
    for asset in assets:
        assert client.get(asset).status_code == 200, asset
    script = client.get("/static/api_docs.js").get_data(as_text=True)
    assert "http://" not in script and "https://" not in script and "innerHTML" not in script


def test_the_document_names_the_settings_it_mentions() -> None:
    """A TANSUO_ variable named in the contract is a real setting."""
    text = Path(__file__).parents[2].joinpath("services/api/openapi.json").read_text(encoding="utf-8")
    fields = set(Settings.model_fields)
    for name in set(re.findall(r"TANSUO_([A-Z_]+)", text)):
        assert name.lower() in fields, name
