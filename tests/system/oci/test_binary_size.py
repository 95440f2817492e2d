"""The static binary's size as the docs give it (issue 35, item 12):
README.md and docs/containers.md say one figure, and it is within 15 % of
the stripped static corral these tests build (scripts/build-static.sh),
so that the docs cannot drift from the build again."""

import re

from conftest import REPO_ROOT

TOLERANCE = 0.15


def documented_megabytes():
    readme = (REPO_ROOT / "README.md").read_text()
    containers = (REPO_ROOT / "docs" / "containers.md").read_text()
    said_readme = re.search(r"build-static/corral\.stripped, ([0-9.]+) MB", readme)
    said_containers = re.search(
        r"\| static, stripped \(`build-static/corral\.stripped`\) \| ([0-9.]+) MB "
        r"\(([0-9,]+) bytes", containers)
    assert said_readme, "README.md no longer gives the static binary's size"
    assert said_containers, "docs/containers.md no longer gives the static binary's size"
    return (float(said_readme.group(1)), float(said_containers.group(1)),
            int(said_containers.group(2).replace(",", "")))


def test_the_documented_size_is_the_static_binarys(static_corral):
    readme_mb, containers_mb, containers_bytes = documented_megabytes()
    assert readme_mb == containers_mb, (readme_mb, containers_mb)
    assert abs(containers_bytes / 1e6 - containers_mb) < 0.05, (containers_bytes,
                                                                containers_mb)
    size = static_corral.stat().st_size
    assert abs(size - containers_bytes) <= TOLERANCE * size, (
        f"{static_corral} is {size:,} bytes; README.md and docs/containers.md say "
        f"{containers_mb} MB ({containers_bytes:,} bytes): measure again and update both")
