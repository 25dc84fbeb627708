"""OCR of PDF pages that have no text layer (scans), with Tesseract's Chinese models.

Off by default (``documents_ocr``): a page takes seconds (docs/benchmarks.md, "OCR").
The page is rendered by PDFium at ``documents_ocr_dpi`` and passed to the ``tesseract``
program (Debian's tesseract-ocr with tesseract-ocr-chi-sim and -chi-tra) as a grey
PGM image on its standard input. Tesseract puts spaces between Chinese characters; they are taken
out, as no Chinese text has them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable

from services.common.config import Settings

_HAN = "\u3400-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f"
_SPACE_IN_HAN = re.compile(rf"(?<=[{_HAN}]) +(?=[{_HAN}])")
OCR_TIMEOUT_S = 300


class OcrUnavailable(RuntimeError):
    """OCR is on but the tesseract program or its language data is missing."""


def page_ocr(cfg: Settings) -> Callable[[object], str]:
    """A function from a pypdfium2 page to its text by OCR."""
    binary = shutil.which("tesseract")
    if binary is None:
        raise OcrUnavailable("TANSUO_DOCUMENTS_OCR is on but tesseract is not installed (apt-get install "
                             "tesseract-ocr tesseract-ocr-chi-sim tesseract-ocr-chi-tra)")  # fmt: skip
    scale = cfg.documents_ocr_dpi / 72

    def ocr(page: object) -> str:
        bitmap = page.render(scale=scale, grayscale=True)  # type: ignore[attr-defined]
        return recognise(_pgm(bitmap.width, bitmap.height, bitmap.stride, bytes(bitmap.buffer)), binary,
                         cfg.documents_ocr_languages)  # fmt: skip

    return ocr


def _pgm(width: int, height: int, stride: int, pixels: bytes) -> bytes:
    """A grey bitmap as a PGM image, which Tesseract reads without an image library."""
    rows = pixels if stride == width else b"".join(pixels[y * stride : y * stride + width] for y in range(height))
    return b"P5\n%d %d\n255\n" % (width, height) + rows


def recognise(image: bytes, binary: str, languages: str) -> str:
    """Text of one image (PGM, PNG...) by the tesseract program."""
    proc = subprocess.run([binary, "stdin", "stdout", "-l", languages, "--psm", "3"], input=image,
                          capture_output=True, timeout=OCR_TIMEOUT_S, check=False)  # fmt: skip
    if proc.returncode != 0:
        raise OcrUnavailable(f"tesseract failed: {proc.stderr.decode('utf-8', 'replace')[-300:]}")
    return _SPACE_IN_HAN.sub("", proc.stdout.decode("utf-8", errors="replace"))
