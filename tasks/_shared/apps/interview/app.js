/* Interview room: an interviewer asks questions aloud (the script's clips) and listens to the
 * candidate's microphone. Questions are never written on the page.
 *
 * config:
 *   company, role                       shown in the top bar
 *   interviewer = {name, title}         the interviewer's tile
 *   [[config.questions]]
 *     field = "capital"                 the answer field this question checks
 *     clip = 1                          index of the spoken line that asks it
 *     window_s = 20                     seconds to start answering once the question ends
 *     ack_clip = 2                      optional: a clip played after a right answer
 *
 * Clips that are some question's ack_clip play only as replies; every other clip plays at its
 * script time. The first utterance after a question ends is the answer: it must mention the
 * accepted answer (and no near miss), else the episode ends as "wrong_answer"; silence past the
 * window ends it as "timeout".
 */
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);

  function initials(name) {
    return name.split(/\s+/).filter(Boolean).map((w) => w[0].toUpperCase()).slice(0, 2).join("");
  }

  DynaCU.task({
    autoplayAudio: false,
    setup(ctx) {
      const cfg = ctx.config;
      $("company").textContent = cfg.company || "Company";
      $("role").textContent = "Interview: " + (cfg.role || "Candidate screening");
      const who = cfg.interviewer || {name: "Interviewer", title: ""};
      $("interviewer-name").textContent = who.name;
      $("interviewer-title").textContent = who.title || "";
      $("interviewer-avatar").textContent = initials(who.name);
      const progress = $("progress");
      (cfg.questions || []).forEach((q, i) => {
        const li = document.createElement("li");
        li.textContent = "Question " + (i + 1);
        progress.appendChild(li);
      });
      const done = document.createElement("li");
      done.textContent = "Wrap-up";
      progress.appendChild(done);
    },
    async start(ctx) {
      const cfg = ctx.config;
      const questions = cfg.questions || [];
      const clips = ctx.audioClips;
      const replies = new Set(questions.map((q) => q.ack_clip).filter((c) => c !== undefined));
      const tile = $("interviewer-tile");
      const items = Array.from($("progress").children);
      let speakingUntil = 0;

      function play(i, delay) {
        ctx.playClip(i, delay);
        const from = ctx.now() + delay;
        const until = from + clips[i].duration;
        ctx.at(from, () => tile.classList.add("speaking"));
        speakingUntil = Math.max(speakingUntil, until);
        ctx.at(until, () => { if (ctx.now() >= speakingUntil - 0.05) tile.classList.remove("speaking"); });
      }
      clips.forEach((clip, i) => { if (!replies.has(i)) play(i, clip.t); });

      ctx.every(1, () => {
        const s = Math.floor(ctx.now());
        $("clock").textContent = String(Math.floor(s / 60)).padStart(2, "0") + ":" + String(s % 60).padStart(2, "0");
      });

      let current = -1;     // the question being answered (-1: none open)
      let windowTimer = null;
      function setStatus(text, listening) {
        $("status").textContent = text;
        $("status").classList.toggle("listening", !!listening);
      }
      function mark(k) {
        items.forEach((li, i) => {
          li.classList.toggle("done", i < k);
          li.classList.toggle("current", i === k);
        });
      }
      setStatus("Interviewer is speaking…");
      mark(0);
      questions.forEach((q, k) => {
        const clip = clips[q.clip];
        const end = clip.t + clip.duration;
        ctx.at(end, () => {
          current = k;
          mark(k);
          setStatus("Your turn: answer aloud", true);
          windowTimer = setTimeout(() => { if (current === k) ctx.timeout(); }, (q.window_s || 20) * 1000);
        });
      });

      const mic = await ctx.listen(async (text) => {
        if (current < 0) return;  // talking over the interviewer is not an answer
        const k = current;
        const q = questions[k];
        current = -1;
        clearTimeout(windowTimer);
        setStatus("Answer received");
        const verdict = await ctx.mentions(q.field, text);
        if (verdict !== "accepted") { ctx.fail("wrong_answer"); return; }
        if (q.ack_clip !== undefined) play(q.ack_clip, 0);
        if (k === questions.length - 1) {
          mark(questions.length);
          const after = q.ack_clip !== undefined ? clips[q.ack_clip].duration : 0;
          ctx.at(ctx.now() + after, () => ctx.succeed());
        } else {
          setStatus("Interviewer is speaking…");
        }
      });
      ctx.every(0.05, () => { $("meter").style.width = Math.min(100, mic.level() * 600) + "%"; });
    },
  });
})();
