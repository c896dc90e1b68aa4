"""What one log line costs the controller, beside the stdlib ``logging.Formatter`` in the same run.

    python -m bench.logging_bench [--rounds 9]
    python bench/logging_bench.py

Every worker writes ``successfully synced key=<ns/name> duration=<s>`` after each sync at the
default ``-v 0``; this measures that call end to end (``log.info`` -> record -> our handler ->
format -> redact -> write to ``/dev/null``), in both of our formats, and beside:

- the stdlib floor: the same call through a ``StreamHandler`` with ``logging.Formatter()``
  (``%(message)s`` only: no time, no fields, no redaction);
- the stdlib with a klog-like header (``%(levelname).1s%(asctime)s %(threadName)s]``), the
  nearest stdlib line to ours without fields;
- a sync error with free text (an error message holding a bearer token), where redaction
  must still run;
- a ``log.debug`` with fields at ``-v 0``, which the level filters out before any formatting.

Each figure is the median over interleaved rounds of the thread's CPU time per call (all cases
share the machine's load alike; time spent waiting for a core is not counted). The format step
alone (``Formatter.format`` of a ready record) is timed the same way.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import time
from collections.abc import Callable

from runtime.log import JSONFormatter, TextFormatter, configure_logging

KEY = "bench-ns/foo-00042"
ERROR = (
    'Put "https://10.96.0.1:443/apis/samplecontroller.k8s.io/v1alpha1/namespaces/bench-ns/foos/'
    'foo-00042/status": 401 Unauthorized (Authorization: Bearer abc.def-123)'
)


def timed(fn: Callable[[], object], number: int) -> float:
    """CPU seconds of this thread per call: time spent waiting for a core on a shared machine
    is not the logger's."""
    started = time.thread_time()
    for _ in range(number):
        fn()
    return (time.thread_time() - started) / number


def compare(cases: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Median seconds per call of each case, the cases interleaved round by round."""
    first = next(iter(cases.values()))
    number = max(1, int(0.02 / max(timed(first, 20), 1e-8)))  # ~20 ms per case per round
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            samples[name].append(timed(fn, number))
    return {name: statistics.median(values) for name, values in samples.items()}


def stdlib_logger(name: str, fmt: str | None, sink: object) -> logging.Logger:
    """A logger outside the root's handler, with one stdlib StreamHandler."""
    logger = logging.getLogger(name)
    logger.propagate = False
    handler = logging.StreamHandler(sink)  # type: ignore[arg-type]
    handler.setFormatter(logging.Formatter(fmt))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    return logger


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds per figure")
    args = parser.parse_args(argv)

    sink = open(os.devnull, "w")  # open for the whole run
    ours = logging.getLogger("bench.controller")
    floor = stdlib_logger("bench.stdlib", None, sink)
    klog = stdlib_logger(
        "bench.stdlib-klog", "%(levelname).1s%(asctime)s %(threadName)s] %(message)s", sink
    )

    def synced(logger: logging.Logger) -> Callable[[], None]:
        return lambda: logger.info("successfully synced", extra={"key": KEY, "duration": 0.001234})

    def sync_error() -> None:
        ours.error("error syncing, requeuing", extra={"key": KEY, "error": ERROR, "requeues": 3})

    def filtered() -> None:
        ours.debug("processing object", extra={"object": KEY})

    results: dict[str, float] = {}
    for fmt in ("text", "json"):
        handler = configure_logging(fmt, 0, sink)
        cases = {
            f"ours ({fmt}): successfully synced": synced(ours),
            "stdlib Formatter(): same call": synced(floor),
            "stdlib klog-like header: same call": synced(klog),
            f"ours ({fmt}): sync error, free text redacted": sync_error,
            f"ours ({fmt}): debug at -v 0 (filtered)": filtered,
        }
        for name, secs in compare(cases, args.rounds).items():
            results.setdefault(name, secs)  # the stdlib cases run twice; keep the first
        logging.getLogger().removeHandler(handler)

    record = ours.makeRecord(
        ours.name, logging.INFO, __file__, 1, "successfully synced", (), None,
        extra={"key": KEY, "duration": 0.001234},
    )  # fmt: skip
    text, json_, stdlib = TextFormatter(), JSONFormatter(), logging.Formatter()
    klog_fmt = logging.Formatter("%(levelname).1s%(asctime)s %(threadName)s] %(message)s")
    formats = {
        "format only: ours (text)": lambda: text.format(record),
        "format only: ours (json)": lambda: json_.format(record),
        "format only: stdlib Formatter()": lambda: stdlib.format(record),
        "format only: stdlib klog-like header": lambda: klog_fmt.format(record),
    }
    results.update(compare(formats, args.rounds))
    sink.close()

    print(f"python {sys.version.split()[0]}; median of {args.rounds} interleaved rounds\n")
    call_base = results["stdlib Formatter(): same call"]
    format_base = results["format only: stdlib Formatter()"]
    for name, secs in results.items():
        base = format_base if name.startswith("format only:") else call_base
        print(f"{name:48} {secs * 1e6:8.2f} us  {secs / base:5.2f}x stdlib Formatter()")


if __name__ == "__main__":
    main()
