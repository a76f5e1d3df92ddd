"""Look at the built documentation site in a real browser (headless Chromium).

Serves ``docs/_build/html`` on a loopback port, loads the home page and one
executed tutorial, and fails (exit 1) when a page logs a console error, fails to
load a resource, or lacks what it must show (the home page's figure, the
tutorial's rendered plot). Screenshots are written to ``docs/_build/screenshots``
as build artefacts, not committed. Run after ``make docs`` (``make docs-check``).
Needs Debian's ``chromium`` package; nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

#: Each page to load, and what its rendered DOM must hold (regular expressions):
#: the home page's figure; the tutorial's executed plot and its typeset formulas
#: (MathJax turns TeX into mjx-container elements; raw TeX means it did not load).
PAGES = {
    "index.html": (r'<img[^>]+fig4_tradeoff\.png',),
    "tutorials/theorem1.html": (r'<img[^>]+src="[^"]*\.png"', r"<mjx-container"),
}
_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
          "--virtual-time-budget=8000"]
_CONSOLE_PROBLEM = re.compile(r"CONSOLE\(\d+\)\].*(Uncaught|Error|Failed to load)|"
                              r":ERROR:CONSOLE|net::ERR_", re.I)


def _serve(root: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    handler = functools.partial(Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def _chromium(browser: str, profile: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([browser, *_FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120)


def check(html: Path, shots: Path, browser: str) -> list[str]:
    """Problems found on the site's pages (``[]`` when every page is clean)."""
    problems = []
    shots.mkdir(parents=True, exist_ok=True)
    server, base = _serve(html)
    try:
        for page, must in PAGES.items():
            if not (html / page).is_file():
                problems.append(f"{page}: not built")
                continue
            with tempfile.TemporaryDirectory() as profile:
                shot = shots / (page.replace("/", "_").removesuffix(".html") + ".png")
                run = _chromium(browser, profile, "--window-size=1280,1800",
                                f"--screenshot={shot}", base + page)
                errors = [ln for ln in run.stderr.splitlines() if _CONSOLE_PROBLEM.search(ln)]
                problems += [f"{page}: console: {ln.strip()[:300]}" for ln in errors]
                if not shot.is_file() or shot.stat().st_size < 10_000:
                    problems.append(f"{page}: no screenshot was rendered")
            with tempfile.TemporaryDirectory() as profile:
                dom = _chromium(browser, profile, "--dump-dom", base + page).stdout
            problems += [f"{page}: the rendered page lacks {pattern!r}"
                         for pattern in must if not re.search(pattern, dom)]
    finally:
        server.shutdown()
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, default=Path("docs/_build/html"))
    parser.add_argument("--screenshots", type=Path, default=Path("docs/_build/screenshots"))
    args = parser.parse_args(argv)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("check_site: chromium not found; install it with: apt-get install -y chromium",
              file=sys.stderr)
        return 2
    if not (args.html / "index.html").is_file():
        print(f"check_site: no site at {args.html}; build it first with: make docs",
              file=sys.stderr)
        return 2
    problems = check(args.html, args.screenshots, browser)
    for p in problems:
        print(p)
    print(f"{len(PAGES)} pages loaded in Chromium; {len(problems)} problems; "
          f"screenshots in {args.screenshots}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
