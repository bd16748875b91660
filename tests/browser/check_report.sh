#!/usr/bin/env bash
# Opens an HTML report in a real browser (Debian's chromium, headless) and checks what a reader
# would see: a non-blank screenshot, no console errors, every chart SVG rendered with a size and
# its axis labels, the comparison table; then validates the file as HTML5 (html5lib, strict).
# Usage: tests/browser/check_report.sh REPORT_DIR [SCREENSHOT.png]
set -euo pipefail
report=$(cd "$1" && pwd)
shot=${2:-$report/screenshot.png}
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "check_report: chromium is not installed (apt-get install chromium)" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --hide-scrollbars --user-data-dir="$tmp/profile")
url="file://$report/index.html"
timeout 120 "$browser" "${flags[@]}" --enable-logging=stderr --v=0 --window-size=1280,2400 \
  --screenshot="$shot" "$url" 2> "$tmp/console.log" > /dev/null
timeout 120 "$browser" "${flags[@]}" --virtual-time-budget=2000 --dump-dom "$url" 2> /dev/null > "$tmp/dom.html"

python3 - "$report" "$shot" "$tmp/dom.html" "$tmp/console.log" <<'PY'
import os, re, sys
report, shot, dom_path, console_path = sys.argv[1:]
fail = []
console = open(console_path, errors="replace").read()
for line in console.splitlines():
    if "CONSOLE" in line or "Uncaught" in line or "Failed to load resource" in line:
        fail.append(f"console: {line.strip()}")
if not os.path.exists(shot) or os.path.getsize(shot) < 20000:
    fail.append(f"screenshot {shot} missing or blank")
elif open(shot, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
    fail.append("screenshot is not a PNG")
dom = open(dom_path, errors="replace").read()
charts = sorted(f for f in os.listdir(os.path.join(report, "charts")) if f.endswith(".svg"))
svgs = re.findall(r"<svg\b[^>]*>.*?</svg>", dom, re.S)
if len(svgs) != len(charts):
    fail.append(f"{len(svgs)} SVG elements in the page, {len(charts)} chart files")
labels = ("message size", "time (s)", "stream", "round trip")
for i, svg in enumerate(svgs):
    head = re.match(r"<svg\b[^>]*>", svg).group(0)
    w = re.search(r'width="(\d+)"', head)
    h = re.search(r'height="(\d+)"', head)
    if not (w and h and int(w.group(1)) > 0 and int(h.group(1)) > 0):
        fail.append(f"chart {i} has no size")
    if not any(l in svg for l in labels):
        fail.append(f"chart {i} has no x-axis label")
    if not re.search(r"\((Gbit/s|Mpps|µs[^)]*)\)|>\s*replies\s*<", svg):
        fail.append(f"chart {i} has no y-axis label with a unit")
if '<table class="comparison">' not in dom or dom.count("<tr>") < 3:
    fail.append("comparison table missing")
try:
    import html5lib
    html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(open(os.path.join(report, "index.html"), "rb").read())
except ImportError:
    fail.append("html5lib is not installed (pip install html5lib)")
except Exception as e:
    fail.append(f"index.html is not valid HTML5: {e}")
if fail:
    print("check_report: FAILED\n  " + "\n  ".join(fail))
    sys.exit(1)
print(f"check_report: ok ({len(svgs)} charts, screenshot {shot}, HTML5 valid)")
PY
