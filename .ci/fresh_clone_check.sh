#!/usr/bin/env bash
# A fresh clone, with no ../shared beside it, passes its tests: the shared-corpus tests skip
# (saying why) and the project's own copy of the valid corpus (tests/corpus) is still tested.
#
#   .ci/fresh_clone_check.sh [PYTHON]      PYTHON: an interpreter with the test dependencies
#                                          (default .venv/bin/python); FULL=1 runs every test;
#                                          LITERAL=1 runs the README's test command itself in
#                                          the clone (a new .venv: needs the package index)
#
# The clone is the checkout's tracked files plus new ones git does not ignore (what a commit of
# this tree would hold), copied into an empty temporary folder. It reuses PYTHON's installed
# dependencies and puts the clone's own src first on the path, so nothing is reinstalled.
set -euo pipefail
cd "$(dirname "$0")/.."
python="$(cd "$(dirname "${1:-.venv/bin/python}")" && pwd)/$(basename "${1:-.venv/bin/python}")"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
clone="$scratch/aurane"
mkdir "$clone"
git ls-files -z --cached --others --exclude-standard \
  | tar -cf - --null --no-recursion --ignore-failed-read --files-from=- \
  | tar -xf - -C "$clone"
test ! -e "$scratch/shared"  # what the tests look for: ../shared beside the clone
unset AURANE_SHARED
if [ "${FULL:-0}" = "1" ]; then
  selection=(tests)
else
  # every test that reads the corpus, shared or the project's copy (about 30 s)
  selection=(
    tests/test_corpus.py
    tests/ops/test_corpus_totals.py
    tests/syntax/test_parse_golden.py
    tests/syntax/test_parser.py
    tests/analysis/test_diagrams.py
    tests/backends/torch/test_attention.py
    tests/backends/torch/test_golden.py
    tests/tools/test_format.py
  )
fi
# the README's test command, as written there (CI's .ci/run runs the same line)
readme_command="$(grep -m1 -E "^python3 -m venv .venv && .*pytest" README.md)"
grep -qF "$readme_command" .ci/run || { echo "README's test command differs from .ci/run" >&2; exit 1; }
cd "$clone"
log="$scratch/pytest.log"
set +e
if [ "${LITERAL:-0}" = "1" ]; then
  bash -c "$readme_command -rs" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
else
  PYTHONPATH="$clone/src" PYTHONDONTWRITEBYTECODE=1 "$python" -m pytest -q -p no:cacheprovider \
    -rs "${selection[@]}" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
fi
set -e
if [ "$status" -ne 0 ]; then
  echo "fresh clone without ../shared: pytest failed ($status)" >&2
  exit "$status"
fi
if ! grep -q "need ../shared beside the checkout" "$log"; then
  echo "fresh clone without ../shared: no test skipped for the missing corpus (is it found?)" >&2
  exit 1
fi
echo "fresh clone without ../shared: ok"
