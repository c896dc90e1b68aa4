"""What each cluster of the run could do, and which assertions that ruled out: the summary.

The scenarios record here, through the ``not_asserted`` fixture, each assertion the cluster
kind rules out (with the reason, and what was asserted instead); tests/e2e/conftest.py prints
it all in pytest's terminal summary, so a green run says what it did not prove.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.e2e.capabilities import Capabilities

__all__ = ["REPORT", "Report"]


@dataclass
class Report:
    clusters: dict[str, Capabilities] = field(default_factory=dict)  # name -> probed
    # (cluster name, assertion, reason) -> the tests that could not make it, in order
    not_asserted: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)

    def probed(self, cluster: str, capabilities: Capabilities) -> None:
        self.clusters[cluster] = capabilities

    def skip_assertion(self, cluster: str, test: str, what: str, why: str) -> None:
        tests = self.not_asserted.setdefault((cluster, what, why), [])
        if test not in tests:
            tests.append(test)

    def lines(self) -> list[str]:
        out: list[str] = []
        for name, capabilities in self.clusters.items():
            out.append(f"{name}: {capabilities.describe()}")
            skipped = [(k, v) for k, v in self.not_asserted.items() if k[0] == name]
            if not skipped:
                out.append("  every assertion made")
            for (_, what, why), tests in skipped:
                out.append(f"  not asserted: {what}")
                out.append(f"    why: {why}")
                out.append(f"    in: {', '.join(tests)}")
        return out


REPORT = Report()  # this pytest run's
