#!/usr/bin/python3
"""ctest report_browser: the review reports opened in headless Chromium.

usage: check_browser.py SOURCE_DIR WORK_DIR [--dse DSE_BINARY] [REPORT_DIR...]

For each report folder (REPORT_DIR..., else results/<scenario>/report of every shipped scenario;
with --dse also a fresh report of scenarios/llm-serving.yaml drawn by the current scripts):
  - Chromium (Debian's `chromium`, installed by scripts/setup.sh) loads index.html from a copy
    with a probe script added, which reports every <img>'s load state and natural size and where
    the page lays it out; each figure of figures.json must have loaded (complete, decoded to the
    width and height the manifest gives);
  - the same Chromium run screenshots the page laid out 1400 px wide to PNG, at device scale 0.5
    (a 700 px bitmap: a quarter of the pixels to draw, encode and decode); every figure's place on
    it must not be blank (pixel variance over the figure's box);
  - the HTML references no missing file, anchor or network address (figure_checks.check_links);
  - no two texts of a figure overlap and none leaves it (the matplotlib renderer's boxes);
  - every drawn number equals the value read back from the report's result file (the .h5 one
    folder up: results/<scenario>/<scenario>.h5) with h5py (figure_checks.check_numbers).
Exit 77 (ctest: skipped) with one line when chromium is not installed, unless
DSE_REQUIRE_CHROMIUM=1 or CI is set (scripts/test.sh sets it after scripts/setup.sh installed it):
then its absence fails the test."""
import glob
import json
import os
import shutil
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figure_checks as fc  # noqa: E402

WIDTH_PX = 1400
# The tallest screenshot taken (CSS px); a longer page is shot in several (check_report). The first
# shot is taken with the probe, before the page's height is known, so its window is this tall.
MAX_SHOT_PX = 16000
# Device pixels per CSS pixel of the screenshots: the layout is the 1400 px one, the bitmap half as
# wide and tall. A figure's box is still hundreds of pixels of axes and text on white.
SHOT_SCALE = 0.5
# A figure's box on the screenshot: axes, text and marks on white give a pixel variance (0..1 scale)
# far above this; a blank or missing image (white, or a broken-image icon) gives about 0.
MIN_VARIANCE = 1e-3
PROBE = """<script>window.addEventListener('load',function(){var o=[];
document.querySelectorAll('img').forEach(function(i){var r=i.getBoundingClientRect();
o.push({src:i.getAttribute('src'),complete:i.complete,w:i.naturalWidth,h:i.naturalHeight,
x:r.left+window.scrollX,y:r.top+window.scrollY,cw:r.width,ch:r.height});});
var p=document.createElement('pre');p.id='dse-probe';p.textContent=JSON.stringify({images:o,
height:Math.ceil(document.body.getBoundingClientRect().bottom+window.scrollY),width:document.documentElement.scrollWidth});
document.body.appendChild(p);});</script>"""

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def browse(browser, args, url, timeout=120):
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           "--virtual-time-budget=10000"] + args + [url]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return r


def probe(browser, rep, work, shot):
    """The probe's report of the page in `rep` (copied to `work`), and a screenshot of its first
    MAX_SHOT_PX px to `shot`, from one Chromium run."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(rep, work)
    with open(os.path.join(work, "index.html"), encoding="utf-8") as f:
        page = f.read()
    with open(os.path.join(work, "probe.html"), "w", encoding="utf-8") as f:
        f.write(page.replace("</body>", PROBE + "</body>"))
    r = browse(browser, [f"--window-size={WIDTH_PX},{MAX_SHOT_PX}", f"--force-device-scale-factor={SHOT_SCALE}",
                         "--dump-dom", f"--screenshot={shot}"], "file://" + os.path.join(work, "probe.html"))
    start = r.stdout.find('id="dse-probe">')
    if start < 0:
        return None, r.stderr[-2000:]
    text = r.stdout[start + len('id="dse-probe">'):]
    text = text[:text.find("</pre>")]
    import html
    return json.loads(html.unescape(text)), ""


def check_report(browser, rep, h5, work):
    """h5: the result file the report was drawn from, or None for a shipped report whose file is
    not beside it (results/**/*.h5 are not in git: a fresh clone has the reports only; the numbers
    of the fresh llm-serving report, made here, are read back in its place)."""
    print(f"report {rep} (numbers from {h5 or 'no result file beside it: not read back'})")
    manifest = fc.load_manifest(rep)
    check(len(manifest["figures"]) >= 7, f"{rep}: at least seven figures ({len(manifest['figures'])})")
    for f in fc.check_links(rep, manifest) + fc.check_texts(manifest):
        check(False, f"{rep}: {f}")
    n = 0
    if h5 is not None:
        bad, n = fc.check_numbers(h5, manifest)
        for f in bad:
            check(False, f"{rep}: {f}")
        check(n > 0, f"{rep}: some drawn numbers read back ({n})")
    print(f"  {n} drawn numbers read back, {sum(len(g['texts']) for g in manifest['figures'])} text boxes checked")

    first_shot = work + "-shot0.png"
    info, err = probe(browser, rep, work, first_shot)
    check(info is not None, f"{rep}: chromium ran the probe ({err})")
    if info is None:
        return
    imgs = {i["src"]: i for i in info["images"]}
    for fig in manifest["figures"]:
        i = imgs.get(fig["file"])
        check(i is not None, f"{rep}: chromium lays out {fig['file']}")
        if i is None:
            continue
        check(i["complete"] and (i["w"], i["h"]) == (fig["width_px"], fig["height_px"]),
              f"{rep}: {fig['file']} decodes in chromium at {fig['width_px']}x{fig['height_px']} "
              f"(complete {i['complete']}, {i['w']}x{i['h']})")
    for src, i in imgs.items():
        check(i["complete"] and i["w"] > 0, f"{rep}: image {src} loads in chromium")
    check(info["width"] <= WIDTH_PX, f"{rep}: the page fits {WIDTH_PX} px (scroll width {info['width']})")

    # Screenshots of at most MAX_SHOT_PX each: the first from the top of the page (taken with the
    # probe), the next ones of a copy whose body is moved up to start at the first figure not yet
    # shot (position: relative).
    todo = [f for f in manifest["figures"] if f["file"] in imgs]
    shots = 0
    while todo:
        top = 0 if shots == 0 else max(0, int(imgs[todo[0]["file"]]["y"]) - 8)
        r = None
        if shots == 0:
            shot = first_shot
        else:
            page = os.path.join(work, f"shot{shots}.html")
            with open(os.path.join(work, "index.html"), encoding="utf-8") as f:
                text = f.read()
            with open(page, "w", encoding="utf-8") as f:
                f.write(text.replace("</head>", f"<style>body{{position:relative;top:-{top}px}}</style></head>"))
            height = max(1, min(int(info["height"]) - top, MAX_SHOT_PX))
            shot = os.path.join(work, f"screenshot{shots}.png")
            r = browse(browser, [f"--window-size={WIDTH_PX},{height}", f"--force-device-scale-factor={SHOT_SCALE}",
                                 f"--screenshot={shot}"], "file://" + page)
        shots += 1
        check(os.path.isfile(shot), f"{rep}: chromium wrote a screenshot ({r.stderr[-500:] if r else err})")
        if not os.path.isfile(shot):
            return
        img = mpimg.imread(shot)
        check(img.shape[1] == round(WIDTH_PX * SHOT_SCALE),
              f"{rep}: screenshot {WIDTH_PX} px wide at scale {SHOT_SCALE} ({img.shape})")
        left = []
        for fig in todo:
            i = imgs[fig["file"]]
            # The box in CSS px, then in the bitmap's pixels.
            y0, y1 = int((i["y"] - top) * SHOT_SCALE), int((i["y"] + i["ch"] - top) * SHOT_SCALE)
            x0, x1 = int(i["x"] * SHOT_SCALE), int((i["x"] + i["cw"]) * SHOT_SCALE)
            if y1 > img.shape[0]:
                left.append(fig)
                continue
            var = float(np.var(img[y0:y1, x0:x1, :3]))
            check(var > MIN_VARIANCE, f"{rep}: {fig['file']} is not blank on the screenshot (variance {var:.3g})")
        if len(left) == len(todo) and top > 0:
            check(False, f"{rep}: {left[0]['file']} does not fit a {MAX_SHOT_PX} px screenshot")
            break
        todo = left
    print(f"  chromium: {len(imgs)} images loaded and decoded, {shots} screenshot(s) {WIDTH_PX} px wide (scale "
          f"{SHOT_SCALE}) of a "
          f"{info['height']} px page, every figure on one and not blank")


def main():
    src, work, reps = sys.argv[1], sys.argv[2], sys.argv[3:]
    dse = None
    if reps[:1] == ["--dse"]:
        dse, reps = reps[1], reps[2:]
    browser = chromium()
    if browser is None:
        if os.environ.get("DSE_REQUIRE_CHROMIUM") == "1" or os.environ.get("CI"):
            print("FAIL: chromium is not installed, and DSE_REQUIRE_CHROMIUM/CI says it must be "
                  "(scripts/setup.sh installs it)")
            return 1
        print("SKIPPED: chromium is not installed (Debian: apt-get install chromium; scripts/setup.sh does it)")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if not reps:
        reps = sorted(glob.glob(os.path.join(src, "results", "*", "report")))
    if dse:
        fresh = os.path.join(work, "fresh")
        os.makedirs(fresh)
        h5 = os.path.join(fresh, "llm-serving.h5")
        for args in (["run", os.path.join(src, "scenarios", "llm-serving.yaml"), "-o", h5, "--no-progress"],
                     ["report", h5, "-o", os.path.join(fresh, "report"), "--sla-ttft-ms", "2000", "--sla-tpot-ms",
                      "100", "--power-w", "10000"]):
            r = subprocess.run([dse] + args, capture_output=True, text=True)
            if r.returncode != 0:
                print(f"FAIL: dse {' '.join(args)}: exit {r.returncode}: {r.stderr[-1000:]}")
                return 1
        reps.append(os.path.join(fresh, "report"))
    check(len(reps) > 0, "report folders to check")
    for k, rep in enumerate(reps):
        parent = os.path.dirname(os.path.abspath(rep))
        h5s = sorted(glob.glob(os.path.join(parent, "*.h5")))
        check(len(h5s) <= 1, f"{rep}: at most one result file beside it ({h5s})")
        # A shipped report is checked against its result file when make_results.sh left one beside
        # it; the fresh report always has its own.
        check(bool(h5s) or not rep.startswith(work), f"{rep}: the fresh report's result file")
        check_report(browser, rep, h5s[0] if len(h5s) == 1 else None, os.path.join(work, f"r{k}"))
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
