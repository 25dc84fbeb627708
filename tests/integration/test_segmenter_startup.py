"""Loading jieba's dictionary in a fresh process."""

from __future__ import annotations

import subprocess
import sys


def test_the_first_segmentation_in_a_process_prints_nothing_on_stderr() -> None:
    code = "from services.common.analysis.words import segment; print(' '.join(segment('中华人民共和国成立了')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "中华人民共和国 成立 了"
    assert done.stderr == ""
