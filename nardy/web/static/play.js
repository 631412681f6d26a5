// The Play pages: the form that starts a game, and the game page. The server is the referee:
// this script only shows its state and sends the player's clicks; every step it offers comes
// from GET /api/play/{id} ("offered"), and a refused click shows the server's reason.
"use strict";

(function () {
  const form = document.getElementById("play-form");
  if (form) setupForm(form);
  const root = document.getElementById("play");
  if (root) setupGame(root);

  function setupForm(form) {
    const variants = JSON.parse(form.dataset.variants);
    const select = document.getElementById("variant");
    const options = document.getElementById("options");
    const opponent = document.getElementById("opponent");
    const otherLabel = document.getElementById("other-bot-label");
    const length = document.getElementById("match_length");
    function showOptions() {
      const v = variants.find((x) => x.name === select.value);
      options.replaceChildren();
      const legend = document.createElement("legend");
      legend.textContent = "Options";
      options.append(legend);
      for (const o of v.options) {
        const { label, input } = variantOptionField(o, JSON.stringify);
        input.name = "opt-" + o.name;
        input.dataset.kind = o.kind;
        options.append(label);
      }
      if (v.match_only && !length.value) length.value = "3";
    }
    select.addEventListener("change", showOptions);
    opponent.addEventListener("change", () => {
      otherLabel.hidden = opponent.value !== "other";
    });
    showOptions();
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const opts = {};
      for (const input of options.querySelectorAll("[data-option]")) {
        const kind = input.dataset.kind;
        let value;
        if (kind === "bool") value = input.checked;
        else if (input.tagName === "SELECT") value = JSON.parse(input.value);
        else if (kind === "int") value = input.value === "" ? null : Number(input.value);
        else value = input.value;
        opts[input.dataset.option] = value;
      }
      let opp;
      if (opponent.value === "friend") opp = { kind: "friend" };
      else if (opponent.value === "other") opp = { kind: "bot", bot: document.getElementById("other_bot").value.trim() };
      else opp = { kind: "bot", bot: opponent.value.slice(4) };
      const body = {
        variant: select.value,
        options: opts,
        match_length: length.value ? Number(length.value) : null,
        opponent: opp,
        colour: form.querySelector("input[name=colour]:checked").value,
      };
      const error = document.getElementById("form-error");
      error.textContent = "";
      const r = await fetch("/api/play", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      const data = await r.json();
      if (!r.ok) {
        error.textContent = data.error;
        return;
      }
      if (data.friend_url) sessionStorage.setItem("nardy-friend-" + data.id, location.origin + data.friend_url);
      location.href = data.seat_url;
    });
  }

  function setupGame(root) {
    const id = root.dataset.id;
    const key = "nardy-seat-" + id;
    const fromHash = new URLSearchParams(location.hash.slice(1)).get("seat");
    if (fromHash) localStorage.setItem(key, fromHash);
    const secret = fromHash || localStorage.getItem(key) || "";
    const $ = (x) => document.getElementById(x);
    const boardEl = $("board");
    let state = null;
    let selected = null;
    let busy = false;
    let timer = null;
    const STEP_MS = 350;

    const friend = sessionStorage.getItem("nardy-friend-" + id);
    if (friend) {
      $("friend").hidden = false;
      $("friend-url").value = friend;
    }

    function headers() {
      const h = { "Content-Type": "application/json" };
      if (secret) h["X-Nardy-Seat"] = secret;
      return h;
    }

    async function load() {
      const r = await fetch("/api/play/" + id, { headers: headers(), cache: "no-store" });
      if (r.ok) await show(await r.json());
      schedule();
    }

    // The opponent's new play, step by step: each frame is the server's board after one more
    // of its steps; then the state itself. Not on the first load (that play is old news).
    let shownPlay = null;
    let animating = false;
    function sleep(ms) {
      return new Promise((done) => setTimeout(done, ms));
    }
    async function show(s) {
      const lp = s.last_play;
      const fresh = lp && state && shownPlay !== lp.player + lp.number && lp.frames.length > 1;
      if (lp) shownPlay = lp.player + lp.number;
      if (fresh) {
        animating = true;
        root.dataset.busy = "1";
        try {
          for (const frame of lp.frames) {
            boardEl.innerHTML = frame;
            $("pin-legend").hidden = !boardEl.querySelector(".checker.pinned");
            root.dataset.framesShown = String(Number(root.dataset.framesShown || 0) + 1);
            const svg = boardEl.querySelector("svg");
            if (svg) {
              svg.removeAttribute("width");
              svg.removeAttribute("height");
            }
            await sleep(STEP_MS);
          }
        } finally {
          animating = false;
          delete root.dataset.busy;
        }
      }
      render(s);
    }

    // While someone else is to act (the bot, the friend), or the game is over (a rematch, the
    // next game), one long poll waits for the next change: GET state?after=VERSION answers
    // when the game moves past the version shown (or after 25 s, then asks again).
    let polling = null; // the AbortController of the long poll in flight
    function schedule() {
      clearTimeout(timer);
      if (polling) {
        polling.abort();
        polling = null;
      }
      if (!state) return;
      const mine = state.decision && state.decision.player === state.seat;
      if (mine) return; // nothing changes until we act
      longPoll();
    }

    async function longPoll() {
      const ctrl = new AbortController();
      polling = ctrl;
      try {
        const r = await fetch("/api/play/" + id + "?after=" + state.version, {
          headers: headers(),
          cache: "no-store",
          signal: ctrl.signal,
        });
        if (!r.ok) throw new Error("HTTP " + r.status);
        const s = await r.json();
        if (polling !== ctrl) return; // an action of ours answered meanwhile
        polling = null;
        await show(s);
        schedule();
      } catch (e) {
        if (polling !== ctrl) return; // aborted by an action of ours
        polling = null;
        timer = setTimeout(schedule, 2000); // the server is away (a restart): ask again soon
      }
    }

    async function act(action, body) {
      if (busy) return;
      busy = true;
      root.dataset.busy = "1"; // for tests and styles: a request is in flight
      if (polling) {
        polling.abort(); // its answer could come after ours, with an older state
        polling = null;
      }
      $("error").textContent = "";
      try {
        const r = await fetch("/api/play/" + id + "/" + action, {
          method: "POST",
          headers: headers(),
          body: JSON.stringify(body || {}),
        });
        const data = await r.json();
        if (!r.ok) {
          $("error").textContent = data.error;
          schedule(); // the long poll this action stopped, if any
          return null;
        }
        if (action === "rematch") {
          location.href = data.url + (secret ? "#seat=" + secret : "");
          return data;
        }
        selected = null;
        await show(data);
        schedule();
        return data;
      } finally {
        busy = false;
        delete root.dataset.busy;
      }
    }

    function pointKey(p) {
      return String(p);
    }

    function render(s) {
      state = s;
      boardEl.innerHTML = s.board;
      $("pin-legend").hidden = !boardEl.querySelector(".checker.pinned");
      const svg = boardEl.querySelector("svg");
      if (svg) {
        svg.removeAttribute("width");
        svg.removeAttribute("height");
        // The viewer's borne-off tray (bottom right) and the bar take clicks as "off" / "bar".
        const trays = [...svg.querySelectorAll("rect.tray")];
        let mine = null;
        for (const t of trays) {
          if (!mine || +t.getAttribute("x") > +mine.getAttribute("x") ||
              (+t.getAttribute("x") === +mine.getAttribute("x") && +t.getAttribute("y") > +mine.getAttribute("y"))) mine = t;
        }
        if (mine) mine.dataset.point = "off";
        const bar = svg.querySelector("rect.bar");
        if (bar) bar.dataset.point = "bar";
      }
      const d = s.decision;
      const mine = d && d.player === s.seat;
      const names = Object.fromEntries(s.seats.map((x) => [x.colour, x.name]));
      let status;
      if (s.result) status = s.result.text;
      else if (!d) status = "";
      else if (mine) {
        status = { play: "Your turn: " + d.segment, double: "Double, or roll?", take: "Doubled to " + d.offered + ": take or pass?" }[d.kind];
        if (d.kind === "play" && s.complete) status = "Confirm your play, or undo.";
      } else status = names[d.player] + (d.kind === "play" ? " to play " + d.segment : d.kind === "take" ? " to answer the double" : " to roll");
      if (!s.seat) status = "Watching · " + status;
      if (s.bot_error) status = s.bot_error;
      $("status").textContent = status;
      // Dice: the segment's, those already used greyed.
      const dice = $("dice");
      dice.replaceChildren();
      if (d && d.kind === "play") {
        const used = s.entered.map((e) => e.die);
        for (const die of d.dice) {
          const el = document.createElement("span");
          el.className = "die-face";
          el.textContent = String(die);
          const i = used.indexOf(die);
          if (i >= 0) {
            used.splice(i, 1);
            el.classList.add("used");
          }
          if (d.player !== s.seat) el.classList.add("theirs");
          dice.append(el);
        }
      }
      const show = (name, on) => { $(name).hidden = !on; };
      show("undo", mine && d.kind === "play" && s.entered.length > 0);
      show("confirm", mine && d.kind === "play" && s.complete);
      show("double", mine && d.kind === "double");
      show("roll", mine && d.kind === "double");
      show("take", mine && d.kind === "take");
      show("drop", mine && d.kind === "take");
      show("beaver", mine && d.kind === "take" && d.beaver_allowed);
      show("resign", !!s.seat && !s.result);
      $("result").hidden = !s.result;
      if (s.result) {
        $("result-text").textContent = s.result.text + (s.match_over ? " · match over" : "");
        show("next", !!s.seat && s.can_next);
        show("rematch", !!s.seat && !s.can_next);
        $("analyse").href = s.analysis_url;
      }
      const score = s.match_length ? "Match to " + s.match_length + ": " + s.score.join("–") + (s.crawford ? " (Crawford)" : "") : "Money play" + (s.cube.enabled ? ", cube " + s.cube.value : "");
      $("score").textContent = score + " · game " + s.game_number;
      const log = $("log");
      log.replaceChildren();
      for (const e of s.log) {
        if (e.kind === "roll" || e.kind === "opening") continue;
        const li = document.createElement("li");
        li.textContent = names[e.player] + ": " + e.text;
        log.append(li);
      }
      log.scrollTop = log.scrollHeight;
      // The same steps as buttons: keyboard and screen-reader play (Tab to one, Enter).
      const offered = $("offered");
      offered.replaceChildren();
      if (mine && d.kind === "play") {
        for (const st of s.offered) {
          const b = document.createElement("button");
          b.type = "button";
          b.className = "step";
          b.textContent = st.from + "/" + st.to + " (" + st.die + ")";
          b.addEventListener("click", () => act("step", { from: st.from, to: st.to, die: st.die }));
          offered.append(b);
        }
      }
      highlight();
    }

    function sources() {
      return new Set(state.offered.map((st) => pointKey(st.from)));
    }
    function destinations(from) {
      return state.offered.filter((st) => pointKey(st.from) === from);
    }

    function highlight() {
      const svg = boardEl.querySelector("svg");
      if (!svg || !state) return;
      for (const el of svg.querySelectorAll(".movable, .selected, .dest")) el.classList.remove("movable", "selected", "dest");
      const srcs = sources();
      const dests = selected ? new Set(destinations(selected).map((st) => pointKey(st.to))) : new Set();
      for (const el of svg.querySelectorAll("polygon.point, rect.bar, rect.tray[data-point]")) {
        const p = el.dataset.point;
        if (selected === p) el.classList.add("selected");
        else if (dests.has(p)) el.classList.add("dest");
        else if (!selected && srcs.has(p)) el.classList.add("movable");
      }
    }

    boardEl.addEventListener("click", (ev) => {
      if (animating || !state || !state.decision || state.decision.player !== state.seat || state.decision.kind !== "play") return;
      const target = ev.target.closest("[data-point]");
      if (!target) return;
      const p = target.dataset.point;
      $("error").textContent = "";
      if (selected === null) {
        if (sources().has(p)) {
          selected = p;
          const dests = destinations(p);
          // One destination only: no second click needed.
          if (new Set(dests.map((st) => pointKey(st.to))).size === 1) {
            sendStep(p, dests[0].to);
            return;
          }
        } else if (state.offered.length) {
          $("error").textContent = "No legal step starts on " + (p === "off" ? "the tray" : p === "bar" ? "the bar" : "point " + p) + ". The highlighted points can move.";
        }
        highlight();
        return;
      }
      if (p === selected) {
        selected = null;
        highlight();
        return;
      }
      if (!destinations(selected).some((st) => pointKey(st.to) === p) && sources().has(p)) {
        selected = p;
        highlight();
        return;
      }
      // Not a highlighted destination: the server refuses it and says why.
      sendStep(selected, p);
    });

    function sendStep(from, to) {
      const asPoint = (x) => (x === "bar" || x === "off" ? x : Number(x));
      selected = null;
      act("step", { from: asPoint(from), to: asPoint(to) }).then(() => highlight());
    }

    $("undo").addEventListener("click", () => act("undo"));
    $("confirm").addEventListener("click", () => act("confirm"));
    $("double").addEventListener("click", () => act("cube", { action: "double" }));
    $("roll").addEventListener("click", () => act("cube", { action: "roll" }));
    $("take").addEventListener("click", () => act("cube", { action: "take" }));
    $("drop").addEventListener("click", () => act("cube", { action: "drop" }));
    $("beaver").addEventListener("click", () => act("cube", { action: "beaver" }));
    $("resign").addEventListener("click", () => {
      if (confirm("Resign this game?")) act("resign");
    });
    $("next").addEventListener("click", () => act("next"));
    $("rematch").addEventListener("click", () => act("rematch"));
    document.addEventListener("keydown", (ev) => {
      if (ev.target.tagName === "INPUT") return;
      if (ev.key === "Enter" && !$("confirm").hidden) act("confirm");
      else if ((ev.key === "Backspace" || ev.key === "u") && !$("undo").hidden) act("undo");
      else if (ev.key === "Escape") { selected = null; highlight(); }
    });
    load();
  }
})();
