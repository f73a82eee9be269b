"""The task format: every task loads, its audio is current, and bad files give clear errors."""

from __future__ import annotations

import itertools
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from dynacu_gym.paths import tasks_root
from dynacu_gym.perception.asr import SAMPLE_RATE, decode_audio
from dynacu_gym.registration import catalogue
from dynacu_gym.tasks import TaskFormatError, find_task, load_task, task_folders
from dynacu_gym.tasks.answers import normalize
from dynacu_gym.tasks.audio_assets import AudioNotRendered, audio_clips, script_hash, spoken_lines

TASK_IDS = sorted(task_folders())
PROBE = Path(__file__).parent / "fixtures" / "tasks" / "F" / "90-input-probe"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_loads_and_is_complete(task_id):
    task = find_task(task_id)
    assert task.solution, "every task has a scripted solution"
    assert task.evidence, "every task says what the agent must perceive"
    for name, spec in task.answers.items():
        assert spec.reject, f"answer {name!r} lists near misses to reject"
    if task.tier == "hard" and task.category != "S":  # a static control has no audio
        assert set(task.axes) == {"audio", "visual", "interaction"}
    if task.category == "S":
        assert not task.script, "a static control says and shows nothing over time"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_audio_matches_script(task_id):
    """Fails when a spoken line changed and `dynacu render-audio` was not run."""
    task = find_task(task_id)
    clips = audio_clips(task)
    assert len(clips) == len(spoken_lines(task))
    for clip in clips:
        assert (task.root / clip["src"].removeprefix("/task/")).is_file()


def _median_pitch(audio: np.ndarray, rate: int = SAMPLE_RATE) -> float:
    """Median fundamental frequency (Hz) of the voiced 40 ms frames, by autocorrelation."""
    frame, lo, hi = int(0.04 * rate), rate // 400, rate // 60  # 60-400 Hz
    loud = np.sqrt(np.mean(audio**2)) * 0.5
    pitches = []
    for start in range(0, len(audio) - frame, frame // 2):
        x = audio[start : start + frame]
        if np.sqrt(np.mean(x**2)) < loud:
            continue
        x = x - x.mean()
        ac = np.correlate(x, x, "full")[frame - 1 :]
        window = ac[lo:hi]
        if window.max() < 0.5 * ac[0]:  # not clearly periodic: unvoiced or silence
            continue
        # The first lag nearly as strong as the best: the period, not a multiple of it.
        lag = lo + int(np.argmax(window >= 0.9 * window.max()))
        pitches.append(rate / lag)
    return float(np.median(pitches))


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_speakers_sound_different(task_id):
    """Two voices in one task are told apart by ear: their measured pitch differs by 5% or more."""
    task = find_task(task_id)
    clips = audio_clips(task)
    by_speaker: dict[str, list[np.ndarray]] = {}
    for clip, (_, line) in zip(clips, spoken_lines(task), strict=True):
        path = task.root / clip["src"].removeprefix("/task/")
        by_speaker.setdefault(line.speaker or "", []).append(decode_audio(path.read_bytes()))
    if len(by_speaker) < 2:
        pytest.skip("one voice")
    pitch = {name: _median_pitch(np.concatenate(parts)) for name, parts in by_speaker.items()}
    for a, b in itertools.combinations(sorted(pitch), 2):
        ratio = max(pitch[a], pitch[b]) / min(pitch[a], pitch[b])
        assert ratio >= 1.05, f"{a} ({pitch[a]:.0f} Hz) and {b} ({pitch[b]:.0f} Hz) sound alike"


def _own_files(task) -> list[Path]:
    """The task's own page files (audio and its generated manifest excluded)."""
    return [
        p
        for p in task.root.rglob("*")
        if p.is_file()
        and p.name != "task.toml"
        and p.suffix in (".html", ".js", ".css", ".json")
        and p.parent.name != "audio"
    ]


def _shared_files(task) -> list[Path]:
    """The code the page shares with other tasks: its app's and the runtime."""
    files = []
    if task.app:
        files += [
            p for p in (tasks_root() / "_shared" / "apps" / task.app).rglob("*") if p.is_file()
        ]
    return [*files, tasks_root() / "_shared" / "dynacu-task.js"]


def _page_files(task) -> list[Path]:
    """Every file the server may hand the page for this task."""
    return _own_files(task) + _shared_files(task)


def _page_sources(task, files: list[Path] | None = None) -> list[str]:
    """The page files (or ``files``) as lower-case text."""
    # SVG geometry is numbers that mean nothing to a reader ("M8 5.5v13", r="25"): not content.
    geometry = re.compile(
        r"""\b(d|points|viewbox|r|rx|ry|cx|cy|x|y|x1|x2|y1|y2|width|height|stroke-width)"""
        r"""=(["'])[^"']*\2"""
    )
    files = _page_files(task) if files is None else files
    return [geometry.sub("", p.read_text(errors="ignore").lower()) for p in files]


# What a script or style sheet says rather than computes: its strings and comments.
_WORDS_OF_CODE = re.compile(
    r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`""",
    re.S,
)


def _page_words(task, files: list[Path]) -> list[str]:
    """``files`` with the numbers of code left out: a script's or style sheet's strings and
    comments, an HTML file whole. `setTimeout(f, 20)` and `width: 48px` do not hold the answer
    20 or 48; "Refund: $48" in a string would."""
    texts = []
    for path, text in zip(files, _page_sources(task, files), strict=True):
        if path.suffix in (".js", ".css"):
            text = " ".join(m.group(0) for m in _WORDS_OF_CODE.finditer(text))
        texts.append(text)
    return texts


# A literal: a string of a script or style sheet, or a text node of HTML.
_LITERALS = re.compile(
    r""""((?:\\.|[^"\\\n])*)"|'((?:\\.|[^'\\\n])*)'|`((?:\\.|[^`\\])*)`|>([^<>]+)<"""
)


def _literals(path: Path) -> set[str]:
    text = path.read_text(errors="ignore")
    found = (next(g for g in m.groups() if g is not None) for m in _LITERALS.finditer(text))
    return {literal.strip() for literal in found} - {""}


def _occurs(form: str, text: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(form.lower())}(?![\w])", text) is not None


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_spoken_words_are_not_on_the_page(task_id):
    """What is said is in no page source and not in the public config or timeline."""
    task = find_task(task_id)
    texts = _page_sources(task)
    public = (repr(task.config) + repr([(line.show, line.extra) for line in task.script])).lower()
    for line in task.script:
        if line.say:
            assert line.say.lower() not in public
            assert not any(line.say.lower() in t for t in texts)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_answers_are_in_no_page_source(task_id):
    """No accepted answer is written in the task's own HTML, JS or CSS (comments included), and
    the code it shares (its app, the runtime) does not single one out.

    Answers of visual tasks reach the page at run time through the timeline; that is the only
    way they may arrive, and only while they are on screen. Shared code serves every task alike:
    its "Submit" or "1" is no task's answer given away, but a literal that is a task's answer
    and none of its near misses would be ("checked" beside "unchecked" tells nothing).
    """
    task = find_task(task_id)
    own = _own_files(task)
    texts, words = _page_sources(task, own), _page_words(task, own)
    literals = set().union(*(_literals(p) for p in _shared_files(task)))
    for name, spec in task.answers.items():
        # A number is content only where the page says it, not where its code computes.
        where = words if spec.kind in ("number", "digits") else texts
        said = {normalize(spec.kind, literal) for literal in literals} - {None}
        near = {normalize(spec.kind, form) for form in spec.reject} - {None}
        for form in spec.accept:
            assert not any(_occurs(form, t) for t in where), (name, form)
            singled_out = normalize(spec.kind, form) in said and not said & near
            assert not singled_out, (name, form, "a literal of the shared code")


def test_catalogue_lists_existing_tasks_only():
    ids = {entry["task"] for entry in catalogue()}
    assert ids and ids <= set(TASK_IDS)


def test_stale_audio_is_refused(tmp_path):
    src = find_task("H1").root
    copy = tmp_path / "H" / src.name
    shutil.copytree(src, copy)
    toml = copy / "task.toml"
    toml.write_text(toml.read_text().replace("What is the capital", "Which is the capital"))
    task = load_task(copy)
    assert script_hash(task) != script_hash(find_task("H1"))
    with pytest.raises(AudioNotRendered, match="render-audio H1"):
        audio_clips(task)


def _broken(tmp_path: Path, edit) -> Path:
    folder = tmp_path / "F" / "90-input-probe"
    shutil.copytree(PROBE, folder)
    toml = folder / "task.toml"
    toml.write_text(edit(toml.read_text()))
    return folder


REQUIRED = ["id", "title", "tier", "axes", "instruction", "duration_s", "time_limit_s"]


@pytest.mark.parametrize("field", REQUIRED)
def test_missing_field_is_named(tmp_path, field):
    def drop(text: str) -> str:
        return "\n".join(x for x in text.splitlines() if not x.startswith(f"{field} ="))

    with pytest.raises(TaskFormatError, match=rf"task\.toml: .*{field}"):
        load_task(_broken(tmp_path, drop))


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("id", "90", "a task id like 'A1'"),
        ("title", "5", "a non-empty string"),
        ("title", '"  "', "a non-empty string"),
        ("tier", '["easy"]', "one of easy, medium, hard"),
        ("axes", '"visual"', "a non-empty list drawn from audio, visual, interaction"),
        ("axes", "[]", "a non-empty list drawn from audio, visual, interaction"),
        ("instruction", "true", "a non-empty string"),
        ("duration_s", "[60]", "a number >= 0.1"),
        ("duration_s", "0", "a number >= 0.1"),
        ("time_limit_s", '"60"', "a number >= 0.1"),
        ("time_limit_s", "true", "a number >= 0.1"),
    ],
)
def test_mistyped_field_is_named(tmp_path, field, value, expected):
    def retype(text: str) -> str:
        lines = text.splitlines()
        return "\n".join(f"{field} = {value}" if x.startswith(f"{field} =") else x for x in lines)

    with pytest.raises(TaskFormatError) as info:
        load_task(_broken(tmp_path, retype))
    assert f"task.toml: '{field}': expected {expected}, got " in str(info.value)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('tier = "easy"', 'tier = "esay"', "'tier': expected one of easy, medium, hard"),
        ('tier = "easy"', "tier = 1", "'tier': expected one of"),
        ("duration_s = 60", 'duration_s = "60"', "'duration_s': expected a number"),
        ("time_limit_s = 60", "time_limit_s = 10", "'time_limit_s': expected at least duration_s"),
        ('axes = ["visual"]', 'axes = ["visuals"]', "'axes': expected a non-empty list"),
        ('axes = ["visual"]', 'axes = ["interaction"]', "audio or visual for an easy task"),
        ('title = "Input probe"', 'titel = "Input probe"', "missing 'title'.*is 'titel' a typo"),
        ('kind = "text"', 'kind = "colour"', r"\[answers.word\] 'kind'"),
        ('reject = ["grey whale"]', 'reject = ["Blue  Whale"]', "near misses that differ"),
        ('action = "key Enter"', 'action = "key Hyper"', r"\[solution #3\] 'action': unknown key"),
        ('"{answer.word}"', '"{answer.colour}"', "FIELD in"),
        ('id = "F90"', 'id = "F91"', "does not match the folder"),
        (
            'failures = ["wrong_answer"]',
            'failures = ["wrong_answer"]\ncolour = 1',
            "unknown key 'colour'",
        ),
        ('id = "F90"', 'id = "Q90"', "'id'"),
        ("[answers.word]", "[answers.word\n", "not valid TOML"),
        ('action = "key Enter"', 'actions = ["key Enter", "tpye x"]', "#3\\] 'actions': unknown"),
        ('action = "key Enter"', 'action = "key Enter"\nrepeat = 0', "'repeat': expected a whole"),
        ('action = "key Enter"', 'action = "x"\nactions = ["y"]', "not both"),
    ],
)
def test_typos_give_clear_errors(tmp_path, old, new, message):
    folder = _broken(tmp_path, lambda t: t.replace(old, new, 1))
    with pytest.raises(TaskFormatError, match=message) as info:
        load_task(folder)
    assert "task.toml" in str(info.value)


EVIDENCE = '\n[[evidence]]\nfact = "two prices"\nchannel = "visual"\nwindow = [0, 9]\n'


def test_evidence_may_need_all_its_keys(tmp_path):
    keys = 'keys = ["$3", "$4"]\n'
    task = load_task(_broken(tmp_path / "a", lambda t: t + EVIDENCE + keys + "all_keys = true\n"))
    assert task.evidence[0].all_keys and task.evidence[0].keys == ("$3", "$4")
    assert not load_task(_broken(tmp_path / "b", lambda t: t + EVIDENCE)).evidence[0].all_keys
    with pytest.raises(TaskFormatError, match="'all_keys': expected true or false"):
        load_task(_broken(tmp_path / "c", lambda t: t + EVIDENCE + 'all_keys = "yes"\n'))


def test_evidence_may_follow_the_agents_action(tmp_path):
    task = load_task(_broken(tmp_path / "a", lambda t: t + EVIDENCE + "follows = 1\n"))
    assert task.evidence[0].follows == 1
    assert load_task(_broken(tmp_path / "b", lambda t: t + EVIDENCE)).evidence[0].follows is None
    steps = len(task.solution)
    with pytest.raises(TaskFormatError, match=f"a step of the {steps}-step solution, got 9"):
        load_task(_broken(tmp_path / "c", lambda t: t + EVIDENCE + "follows = 9\n"))
    with pytest.raises(TaskFormatError, match="'follows': expected a solution step"):
        load_task(_broken(tmp_path / "d", lambda t: t + EVIDENCE + "follows = 1.5\n"))
    # A line the page says once the agent acted (a question after an answer) follows it too.
    spoken = EVIDENCE.replace('"visual"', '"audio"') + "follows = 1\n"
    assert load_task(_broken(tmp_path / "e", lambda t: t + spoken)).evidence[0].follows == 1


def test_visual_evidence_may_not_follow_a_spoken_step(tmp_path):
    # The audit's timeline, against which every visual item is judged, does not speak.
    speaks = find_task("H1")
    assert speaks.solution[0].speaks
    text = (speaks.root / "task.toml").read_text(encoding="utf-8")
    folder = tmp_path / "H" / speaks.root.name
    shutil.copytree(speaks.root, folder)
    (folder / "task.toml").write_text(text + EVIDENCE + "follows = 1\n", encoding="utf-8")
    with pytest.raises(TaskFormatError, match="'follows': expected for visual evidence, a step"):
        load_task(folder)
    spoken = EVIDENCE.replace('"visual"', '"audio"') + "follows = 1\n"
    (folder / "task.toml").write_text(text + spoken, encoding="utf-8")
    assert load_task(folder).evidence[-1].follows == 1


def test_a_checklist_names_its_criteria(tmp_path):
    two = '\n[checklist]\ncode = "the code in its box"\ndiscount = "the discount in its box"\n'
    task = load_task(_broken(tmp_path / "a", lambda t: t + two))
    assert task.checklist == {"code": "the code in its box", "discount": "the discount in its box"}
    assert load_task(_broken(tmp_path / "b", lambda t: t)).checklist == {}
    one = '\n[checklist]\ncode = "the code"\n'
    with pytest.raises(TaskFormatError, match="two criteria or more"):
        load_task(_broken(tmp_path / "c", lambda t: t + one))
    with pytest.raises(TaskFormatError, match="'checklist.code': expected a non-empty string"):
        load_task(_broken(tmp_path / "d", lambda t: t + two.replace('"the code in its box"', "3")))
    with pytest.raises(TaskFormatError, match="criteria named like answer fields"):
        load_task(_broken(tmp_path / "e", lambda t: t + two.replace("code =", '"the code" =')))


def test_a_run_of_actions_repeats_and_waits_once(tmp_path):
    """`actions` with `repeat` expands into single steps; `at` and `when` hold the first only."""
    run = 'at = 2.0\nwhen = "ready()"\nactions = ["wait 0.5", "key Enter"]\nrepeat = 3'
    task = load_task(_broken(tmp_path, lambda t: t.replace('action = "key Enter"', run)))
    steps = task.solution[2:]
    assert [s.action for s in steps] == ["wait 0.5", "key Enter"] * 3
    assert (steps[0].at, steps[0].when) == (2.0, "ready()")
    assert all(s.at is None and not s.when for s in steps[1:])


def test_missing_task_file(tmp_path):
    with pytest.raises(TaskFormatError, match="no such task file"):
        load_task(tmp_path / "F" / "1-nothing")


def test_unknown_task_id_suggests():
    with pytest.raises(ValueError, match="no task 'H11'"):
        find_task("H11")
