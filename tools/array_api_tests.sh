#!/bin/bash
# The Python array API standard's test suite (data-apis/array-api-tests) run
# against microjax_rs.numpy and against JAX's jax.numpy, with the same options
# and test selection, in one run; prints both pass counts (figures in
# docs/COMPATIBILITY.md, section "Array API standard").
#
#   tools/array_api_tests.sh SUITE_DIR
#
# SUITE_DIR: a checkout of data-apis/array-api-tests at commit
#   55fcc60179efa2680ddd6cd926ddf17b83530e2b, with its `array-api` submodule
#   (data-apis/array-api) at 5f847a3858875c682ae901aa22b0413bf24be9da.
# MJ_PYTHON: a Python that imports microjax_rs and has the suite's
#   requirements (pytest, pytest-json-report, hypothesis, ndindex).
# JAX_PYTHON: a Python with jax==0.10.2, jaxlib==0.10.2 and the same requirements.
# MAX_EXAMPLES (default 20), TESTS (default: the whole array_api_tests/ folder),
# OUT (default /tmp/array-api-tests): logs and JSON reports.
# The two runs go side by side, one process each, under `nice`.
set -u
SUITE=$(cd "${1:?usage: tools/array_api_tests.sh SUITE_DIR}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MJ_PYTHON=${MJ_PYTHON:-python3}
JAX_PYTHON=${JAX_PYTHON:?set JAX_PYTHON to a Python with jax==0.10.2}
MAX_EXAMPLES=${MAX_EXAMPLES:-20}
TESTS=${TESTS:-array_api_tests/}
OUT=${OUT:-/tmp/array-api-tests}
SKIPS="$ROOT/tools/array_api_skips.txt"
mkdir -p "$OUT"
echo "suite: $(git -C "$SUITE" rev-parse HEAD 2>/dev/null || echo "$SUITE (not a git checkout)")"
# 64-bit types on (as JAX runs this suite), the 2024.12 revision of the standard.
export JAX_ENABLE_X64=1 ARRAY_API_TESTS_VERSION=2024.12 JAX_PLATFORMS=cpu MICROJAX_PLATFORM=cpu PYTHONHASHSEED=0

run() {  # name, python, namespace module
    (cd "$SUITE" && ARRAY_API_TESTS_MODULE=$3 nice "$2" -m pytest -c "$SUITE/pytest.ini" --rootdir "$SUITE" \
        -p no:cacheprovider -q -rfE --tb=line \
        --max-examples "$MAX_EXAMPLES" --disable-deadline --derandomize --skips-file "$SKIPS" \
        --json-report --json-report-file="$OUT/$1.json" $TESTS > "$OUT/$1.log" 2>&1)
}
run microjax_rs "$MJ_PYTHON" microjax_rs.numpy &
run jax "$JAX_PYTHON" jax.numpy &
wait
"$MJ_PYTHON" "$ROOT/tools/array_api_summary.py" "$OUT/microjax_rs.json" "$OUT/jax.json"
