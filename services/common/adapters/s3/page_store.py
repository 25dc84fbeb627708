"""Cluster page store: one S3 object per page, through the ``minio`` client
(``TANSUO_STORE=s3://…``); works with MinIO, SeaweedFS, Ceph and AWS S3.

URL forms::

    s3://KEY:SECRET@minio:9000/bucket                 plain HTTP
    s3+https://KEY:SECRET@s3.example.com/bucket       TLS (or s3://…?secure=1)
    s3://KEY:SECRET@minio:9000/bucket/some/prefix     keys under some/prefix/
    s3://minio:9000/bucket?region=cn-north-1          credentials from AWS_ACCESS_KEY_ID and
                                                      AWS_SECRET_ACCESS_KEY (or MINIO_ACCESS_KEY…,
                                                      or an IAM role); region skips a lookup

A key or secret holding ``/``, ``+``, ``@`` or ``:`` must be percent-encoded in the URL.
The bucket is created on first use if it is missing.

Layout: the page with key K is the object ``pages/<K[:2]>/<K>``, whose body is the raw
fetched bytes (Content-Type from the page's own header) and whose user metadata holds
the rest: ``status``, ``fetched-at``, ``content-hash``, ``url`` and ``headers`` (JSON).
The two-character fan-out spreads keys over prefixes, which S3 partitions by.

S3 caps user metadata at 2 KB, and response headers alone can exceed that (cookies,
CSP). A page whose metadata does not fit keeps only ``status``, ``fetched-at``,
``content-hash`` and ``meta-ref`` on the object, and the whole metadata goes to a JSON
sidecar ``page-meta/<K[:2]>/<K>/<meta-ref>.json``, named by the SHA-1 of its content and
written before the page. So one PUT still switches a reader from one version of a page
to the next (S3 PUTs are atomic), a reader never pairs a body with another fetch's
headers, and a crash between the two PUTs leaves the old page whole. Sidecars of earlier
versions are deleted on the next oversized put, once an hour old (a younger one may
belong to a concurrent writer of the same key); a reader whose sidecar vanished under
it reads the page again.

Metadata values are ASCII, as HTTP headers must be: text is percent-encoded (every
``%``, space and non-ASCII character), so the URL round-trips exactly, whatever escapes
it held already.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

import certifi
import urllib3
from minio import Minio
from minio.credentials import (
    ChainedProvider,
    EnvAWSProvider,
    EnvMinioProvider,
    IamAwsProvider,
)
from minio.error import MinioException, S3Error

from services.common.domain.documents import StoredPage
from services.common.errors import BackendError, BackendUnavailable

if TYPE_CHECKING:
    from services.common.config import Settings

log = logging.getLogger(__name__)

_METADATA_LIMIT = 2048  # bytes of x-amz-meta-* names and values (the S3 limit)
_SIDECAR_GRACE_S = 3600.0
_META = "x-amz-meta-"
# Printable ASCII but "%" and space: what percent-encoding may leave as it is.
_SAFE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) != "%")
_SECURE_SCHEMES = {"s3": None, "s3+http": False, "s3+https": True}


class StoreError(BackendError):
    """The object store refused a request."""


class StoreUnavailable(StoreError, BackendUnavailable):
    """The object store could not be reached or did not answer in time."""


@dataclass(frozen=True)
class S3Target:
    endpoint: str  # host[:port]
    bucket: str
    prefix: str  # "" or ends with "/"
    secure: bool
    region: str | None
    access_key: str | None
    secret_key: str | None


def parse_s3_url(url: str) -> S3Target:
    parts = urlsplit(url)
    if parts.scheme not in _SECURE_SCHEMES:
        raise ValueError(f"not an S3 URL: {parts.scheme}://… (expected s3://, s3+http:// or s3+https://)")
    query = dict(parse_qsl(parts.query))
    unknown = set(query) - {"secure", "region"}
    if unknown:
        raise ValueError(f"unknown S3 URL parameter(s) {sorted(unknown)} (known: secure, region)")
    secure = _SECURE_SCHEMES[parts.scheme]
    if secure is None:
        secure = query.get("secure", "0").lower() in ("1", "true", "yes", "on")
    bucket, _, prefix = parts.path.lstrip("/").partition("/")
    if not bucket:
        raise ValueError(f"S3 URL names no bucket: s3://{parts.hostname}/<bucket>")
    if not parts.hostname:
        raise ValueError("S3 URL names no host")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    endpoint = f"{host}:{parts.port}" if parts.port else host
    prefix = prefix.strip("/")
    return S3Target(
        endpoint=endpoint,
        bucket=bucket,
        prefix=f"{prefix}/" if prefix else "",
        secure=secure,
        region=query.get("region") or None,
        access_key=unquote(parts.username) if parts.username else None,
        secret_key=unquote(parts.password) if parts.password is not None else None,
    )


def _enc(text: str) -> str:
    return quote(text, safe=_SAFE)


def _meta_size(meta: dict[str, str]) -> int:
    return sum(len(k.encode()) + len(v.encode()) for k, v in meta.items())


def _content_type(headers: dict[str, str]) -> str:
    for name, value in headers.items():
        if name.lower() == "content-type" and value.isascii() and value.isprintable():
            return value
    return "application/octet-stream"


class S3PageStore:
    """The ``PageStore`` port on S3. Thread-safe (the minio client is); no I/O happens
    until the first call."""

    remote = True  # a put is an HTTP request: 2 ms on loopback, more across a network

    def __init__(self, target: S3Target, timeout_s: float = 10.0) -> None:
        self._target = target
        self._bucket = target.bucket
        self._prefix = target.prefix
        self.where = f"{'https' if target.secure else 'http'}://{target.endpoint}/{target.bucket}"
        credentials = None
        if target.access_key is None:
            credentials = ChainedProvider([EnvAWSProvider(), EnvMinioProvider(), IamAwsProvider()])
        http = urllib3.PoolManager(
            # minio's own default waits 5 minutes; an unreachable store must fail fast.
            timeout=urllib3.Timeout(connect=min(timeout_s, 5.0), read=timeout_s),
            maxsize=16,
            cert_reqs="CERT_REQUIRED",
            ca_certs=os.environ.get("SSL_CERT_FILE") or certifi.where(),
            retries=urllib3.Retry(total=2, backoff_factor=0.2, status_forcelist=[500, 502, 503, 504]),
        )
        self._s3 = Minio(
            target.endpoint,
            access_key=target.access_key,
            secret_key=target.secret_key,
            secure=target.secure,
            region=target.region,
            http_client=http,
            credentials=credentials,
        )
        self._bucket_ready = False

    @classmethod
    def from_url(cls, url: str, cfg: Settings) -> S3PageStore:
        return cls(parse_s3_url(url), timeout_s=cfg.store_timeout_s)

    # --- names

    def _page_name(self, key: str) -> str:
        return f"{self._prefix}pages/{key[:2]}/{key}"

    def _sidecar_dir(self, key: str) -> str:
        return f"{self._prefix}page-meta/{key[:2]}/{key}/"

    # --- the port

    def put(self, key: str, page: StoredPage) -> None:
        self._ensure_bucket()
        meta = {
            f"{_META}status": str(page.status),
            f"{_META}fetched-at": repr(float(page.fetched_at)),
            f"{_META}content-hash": _enc(page.content_hash),
        }
        inline = {
            f"{_META}url": _enc(page.url),
            f"{_META}headers": _enc(json.dumps(page.headers, ensure_ascii=True, separators=(",", ":"))),
        }
        content_type = _content_type(page.headers)
        if _meta_size(meta) + _meta_size(inline) <= _METADATA_LIMIT:
            self._put(self._page_name(key), page.body, content_type, {**meta, **inline})
            return
        doc = json.dumps(page.meta(), ensure_ascii=False, sort_keys=True).encode("utf-8")
        ref = hashlib.sha1(doc).hexdigest()
        self._put(f"{self._sidecar_dir(key)}{ref}.json", doc, "application/json", {})
        self._put(self._page_name(key), page.body, content_type, {**meta, f"{_META}meta-ref": ref})
        self._drop_stale_sidecars(key, keep=f"{ref}.json")

    def get(self, key: str) -> StoredPage | None:
        self._ensure_bucket()
        for _ in range(3):
            found = self._read(self._page_name(key))
            if found is None:
                return None
            body, headers = found
            ref = headers.get(f"{_META}meta-ref")
            if not ref:
                return StoredPage(
                    url=unquote(headers.get(f"{_META}url", "")),
                    status=int(headers.get(f"{_META}status", "0")),
                    headers=json.loads(unquote(headers.get(f"{_META}headers", "{}"))),
                    fetched_at=float(headers.get(f"{_META}fetched-at", "0")),
                    body=body,
                    content_hash=unquote(headers.get(f"{_META}content-hash", "")),
                )
            sidecar = self._read(f"{self._sidecar_dir(key)}{ref}.json")
            if sidecar is None:
                continue  # overwritten while we read; the new page names a new sidecar
            meta = json.loads(sidecar[0])
            return StoredPage.from_meta(meta, body)
        raise StoreError(f"page {key} in {self.where}: its metadata object keeps vanishing")

    def ping(self) -> None:
        """Raise unless the bucket is reachable (it is created on the first ping)."""
        if not self._bucket_ready:
            self._ensure_bucket()
            return
        with self._errors("check the bucket"):
            exists = self._s3.bucket_exists(self._bucket)
        if not exists:
            self._bucket_ready = False
            raise StoreUnavailable(f"bucket {self.where} does not exist (any more)")

    # --- S3 calls

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except S3Error as exc:
            raise StoreError(f"{self.where}: could not {doing}: {exc.code}: {exc.message}") from exc
        except (urllib3.exceptions.HTTPError, OSError, MinioException) as exc:
            raise StoreUnavailable(f"{self.where}: could not {doing}: {exc}") from exc

    def _ensure_bucket(self) -> None:
        if self._bucket_ready:
            return
        with self._errors("create the bucket"):
            if not self._s3.bucket_exists(self._bucket):
                try:
                    self._s3.make_bucket(self._bucket, location=self._target.region)
                    log.info("page store: created bucket %s", self.where)
                except S3Error as exc:
                    if exc.code != "BucketAlreadyOwnedByYou":  # another pod was first: fine
                        raise
        self._bucket_ready = True

    def _put(self, name: str, data: bytes, content_type: str, metadata: dict[str, Any]) -> None:
        with self._errors(f"store {name}"):
            self._s3.put_object(
                self._bucket, name, io.BytesIO(data), len(data), content_type=content_type, metadata=metadata
            )

    def _read(self, name: str) -> tuple[bytes, Any] | None:
        """(body, response headers) of an object, or None if there is none."""
        try:
            with self._errors(f"read {name}"):
                response = self._s3.get_object(self._bucket, name)
                try:
                    return response.read(), response.headers
                finally:
                    response.close()
                    response.release_conn()
        except StoreError as exc:
            if isinstance(exc.__cause__, S3Error) and exc.__cause__.code == "NoSuchKey":
                return None
            raise

    def _drop_stale_sidecars(self, key: str, keep: str) -> None:
        """Best effort: a sidecar left behind costs a few bytes, never correctness."""
        cutoff = datetime.now(UTC).timestamp() - _SIDECAR_GRACE_S
        try:
            with self._errors("list old metadata objects"):
                for obj in self._s3.list_objects(self._bucket, prefix=self._sidecar_dir(key)):
                    name = obj.object_name or ""
                    modified = obj.last_modified.timestamp() if obj.last_modified else time.time()
                    if not name.endswith("/" + keep) and modified < cutoff:
                        self._s3.remove_object(self._bucket, name)
        except StoreError:
            log.warning("page store: could not clean up old metadata of %s", key, exc_info=True)
