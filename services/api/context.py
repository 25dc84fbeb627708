"""What the API's views are handed: the settings, the process's backends and the
services built on them, as one typed object on the app.

The app factory (services/api/app.py) builds it once; a view reads it with
``api_context()`` and never builds an adapter or falls back to a default of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app

from services.analytics.click_links import ClickLinks
from services.analytics.recorder import SearchAnalytics
from services.api.auth_failures import FailureLimit
from services.common.bootstrap import Backends
from services.common.config import Settings
from services.common.runtime.readiness_cache import CachedReadiness
from services.dictionaries.sync import DictionarySync
from services.search.search_service import SearchService
from services.search.site_choices import SiteChoices
from services.search.suggest_service import SuggestService

EXTENSION = "tansuo"


@dataclass(frozen=True)
class ApiContext:
    settings: Settings
    backends: Backends
    search: SearchService
    suggest: SuggestService
    sites: SiteChoices
    readiness: CachedReadiness
    analytics: SearchAnalytics
    click_links: ClickLinks
    dictionaries: DictionarySync
    auth_failures: FailureLimit  # wrong tokens per client address, for 429 (auth_failures.py)


def api_context() -> ApiContext:
    """The context of the app handling the current request."""
    context: ApiContext = current_app.extensions[EXTENSION]
    return context
