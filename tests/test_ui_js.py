"""The apps' shared helpers (tasks/_shared/ui.js), in the real browser, on the probe page."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


@pytest.fixture
def page(probe_env):
    probe_env.reset(seed=0)
    return probe_env.evaluate_in_page


def test_el_builds_classes_text_attributes_and_listeners(page):
    got = page(
        """() => {
        const {el} = DynaCU.ui;
        let clicks = 0;
        const b = el("button.a.b", {class: "c d", text: 0, title: "t", hidden: false,
          disabled: true, attrs: {"data-x": false}, style: {color: "red"},
          on: {click: () => clicks++}});
        b.click();  // disabled: no click event
        const s = el("span", {style: "margin: 2px", html: "<i>x</i>"});
        const c = el("input", {type: "checkbox", checked: true});
        const none = el("p", {text: null}), no = el("p", {text: false});
        const live = el("a", {on: {click: () => clicks++}});
        live.click();
        return {b: b.outerHTML, s: s.outerHTML, c: [c.outerHTML, c.checked],
                empty: [none.outerHTML, no.outerHTML, el("").outerHTML], clicks};
    }"""
    )
    assert got["b"] == (
        '<button class="a b c d" title="t" disabled="" data-x="false" style="color: red;">'
        "0</button>"
    )
    assert got["s"] == '<span style="margin: 2px;"><i>x</i></span>'
    # a non-string value of a property the element has is the property (no attribute)
    assert got["c"] == ['<input type="checkbox">', True]
    assert got["empty"] == ["<p></p>", "<p></p>", "<div></div>"]
    assert got["clicks"] == 1


def test_el_children_flatten_and_skip_what_is_not_there(page):
    html = page(
        """() => DynaCU.ui.el("ul", null, [DynaCU.ui.el("li", {text: "a"}), [null, "b"]],
        false, 0, "", undefined, "c").outerHTML"""
    )
    assert html == "<ul><li>a</li>bc</ul>"


@pytest.mark.parametrize(
    "name, none, expected",
    [
        ("Ana Ruiz", "?", "AR"),
        ("ana lópez", "?", "AL"),
        ("Émile  Zola Jr", "?", "ÉZ"),
        ("Bloom & Stem", "?", "BS"),
        ("Grace Chen, PharmD", "?", "GC"),
        ("(608) 555-0153", "#", "#"),
        ("", "?", "?"),
        (None, "?", "?"),
    ],
)
def test_initials(page, name, none, expected):
    assert page("([n, none]) => DynaCU.ui.initials(n, none)", [name, none]) == expected


@pytest.mark.parametrize(
    "seconds, options, expected",
    [
        (0, {}, "0:00"),
        (-3, {}, "0:00"),
        (65.4, {}, "1:05"),
        (2.9999999999, {}, "0:03"),  # a float just short of a second is that second
        (3661, {}, "1:01:01"),
        (65, {"pad": True}, "01:05"),
        (0.2, {"up": True}, "0:01"),
        (0, {"up": True}, "0:00"),
        (119.5, {"up": True}, "2:00"),
    ],
)
def test_clock(page, seconds, options, expected):
    assert page("([s, o]) => DynaCU.ui.clock(s, o)", [seconds, options]) == expected


def test_icons_draws_the_named_path(page):
    svg = page("""() => DynaCU.ui.icons({dot: '<circle r="2"/>'})("dot", 18)""")
    assert svg == (
        '<svg viewBox="0 0 24 24" width="18" height="18" fill="currentColor" '
        'aria-hidden="true"><circle r="2"/></svg>'
    )


def test_bar_chart_scales_labels_and_grid(page):
    got = page(
        """() => {
        const bars = [{label: "Mon", value: 50}, {label: "Tue", value: "200", text: "200!",
                      tone: "bad"}, {value: 0}];
        const plot = DynaCU.ui.barChart(bars, {tone: true});
        const q = (sel) => [...plot.querySelectorAll(sel)];
        const other = DynaCU.ui.barChart(bars, {grid: 0, max: 400, values: false});
        return {
          grid: q(".grid-line").map((g) => g.style.bottom),
          heights: q(".bar").map((b) => b.style.height),
          classes: q(".bar").map((b) => b.className),
          values: q(".bar-val").map((v) => v.textContent),
          labels: q(".bar-label").map((v) => v.textContent),
          other: [other.querySelectorAll(".grid-line").length,
                  other.querySelectorAll(".bar-val").length,
                  [...other.querySelectorAll(".bar")].map((b) => b.style.height)],
        };
    }"""
    )
    assert got["grid"] == ["100%", "75%", "50%", "25%"]
    assert got["heights"] == ["25%", "100%", "0%"]
    assert got["classes"] == ["bar", "bar tone-bad", "bar"]
    assert got["values"] == ["50", "200!", "0"]
    assert got["labels"] == ["Mon", "Tue", ""]
    assert got["other"] == [5, 0, ["13%", "50%", "0%"]]


def test_track_pauses_to_the_line_start_and_plays_on(page):
    got = page(
        """() => {
        let now = 0;
        const played = [];
        const ctx = {now: () => now, stopAudio: () => played.push("stop"),
          playClip: (i, when, offset) => { played.push([i, when, offset || 0]);
                                           return {context: {state: "running"}}; }};
        const clips = [{index: 0, at: 1, duration: 4}, {index: 1, at: 6, duration: 2}];
        const t = new DynaCU.ui.Track(ctx, clips, 10);
        const log = [t.started];
        t.play(); now = 3; log.push(t.position());
        t.pause(); log.push(t.position());          // mid-line: back to its start
        t.play(); now = 20; t.update(); log.push(t.playing, t.position());
        const live = new DynaCU.ui.Track(ctx, clips, 10, true);
        now = 2; live.play();                        // joins the line playing at the live edge
        live.seek(0); log.push(live.position(), t.started);
        return {log, played};
    }"""
    )
    assert got["log"] == [False, 3, 1, False, 10, 2, True]
    # the first play schedules both clips; after the pause the line replays whole
    assert got["played"][:3] == [[0, 1, 0], [1, 6, 0], "stop"]
    assert got["played"][3:5] == [[0, 0, 0], [1, 5, 0]]
    assert got["played"][5:] == [[0, 0, 1], [1, 4, 0]]
