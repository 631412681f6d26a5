// The analysis board (nardy/web/board.py): edits a position by clicks. The script changes only
// the position's JSON (a checker added comes from those of its side not yet placed, one removed
// goes back there); the server checks it by the variant's rules, says what is wrong with a draft,
// and redraws the board
// (GET /api/board/position), and the Analyse button asks the page itself (GET /board?...), so
// the ranking is the server's and its URL can be shared.
"use strict";

(function () {
  const form = document.getElementById("board-form");
  if (!form) return;
  const $ = (id) => document.getElementById(id);
  const boardEl = $("board");
  const variants = JSON.parse(form.dataset.variants);
  let pos = JSON.parse(boardEl.dataset.position);
  let busy = false;

  function variant() {
    return variants.find((v) => v.name === $("variant").value);
  }

  function stale() {
    // The result below was for the position before the edit: it no longer applies.
    const result = $("result");
    if (result) result.remove();
  }

  function placed(side) {
    // Checkers of a side on the board, the bar and the tray; the rest are still to be placed.
    const sign = side === 0 ? 1 : -1;
    let n = pos.bar[side] + pos.off[side];
    for (const c of pos.points) if (c * sign > 0) n += c * sign;
    return n;
  }

  function show(data) {
    pos = data.position;
    boardEl.innerHTML = data.svg;
    const svg = boardEl.querySelector("svg");
    if (svg) {
      svg.removeAttribute("width");
      svg.removeAttribute("height");
    }
    // A draft (not yet legal) travels as its JSON: the server says why when asked to analyse it.
    $("position").value = data.problem ? JSON.stringify(pos) : data.id;
    const n = variant().checkers;
    for (const s of [0, 1]) {
      $("bar-" + s).textContent = String(pos.bar[s]);
      $("off-" + s).textContent = String(pos.off[s]);
      $("left-" + s).textContent = String(n - placed(s));
    }
    $("error").textContent = data.problem || "";
  }

  async function ask(params) {
    if (busy) return false;
    busy = true;
    form.dataset.busy = "1"; // tests (and styles) wait for the answer
    $("error").textContent = "";
    try {
      const query = new URLSearchParams({ variant: $("variant").value, ...params });
      const r = await fetch("/api/board/position?" + query.toString());
      const data = await r.json();
      if (!r.ok) {
        $("error").textContent = data.error || "The server refused: " + r.status;
        return false;
      }
      show(data);
      stale();
      return true;
    } catch (e) {
      $("error").textContent = "No answer from the server: " + e;
      return false;
    } finally {
      busy = false;
      delete form.dataset.busy;
    }
  }

  function send(next) {
    return ask({ position: JSON.stringify(next), action: "show" });
  }

  function full(side) {
    $("error").textContent = "Every checker of " + (side === 0 ? "White" : "Black") + " is placed: remove one first.";
  }

  function edit(point, remove) {
    const next = structuredClone(pos);
    const i = point - 1;
    const n = next.points[i];
    const mode = remove ? "remove" : form.querySelector("input[name=edit]:checked").value;
    if (mode === "remove") {
      if (n === 0) {
        $("error").textContent = "No checker on point " + point + " to remove.";
        return;
      }
      next.points[i] -= n > 0 ? 1 : -1; // back among the checkers still to be placed
    } else {
      const side = mode === "mover" ? 0 : 1;
      const sign = side === 0 ? 1 : -1;
      if (n * sign < 0) {
        $("error").textContent = "Point " + point + " holds the other side's checkers: remove them first.";
        return;
      }
      if (placed(side) >= variant().checkers) return full(side);
      next.points[i] += sign;
    }
    send(next);
  }

  function pointOf(ev) {
    const target = ev.target.closest("[data-point]");
    if (!target) return null;
    const p = Number(target.dataset.point);
    return Number.isInteger(p) && p >= 1 && p <= 24 ? p : null;
  }

  boardEl.addEventListener("click", (ev) => {
    const p = pointOf(ev);
    if (p !== null) edit(p, ev.shiftKey);
  });
  boardEl.addEventListener("contextmenu", (ev) => {
    const p = pointOf(ev);
    if (p === null) return;
    ev.preventDefault();
    edit(p, true);
  });
  // The bar's and the tray's + and −: a checker from, or back to, those still to be placed.
  for (const b of form.querySelectorAll("button[data-side]")) {
    b.addEventListener("click", () => {
      const side = Number(b.dataset.side);
      const where = b.dataset.where;
      const delta = Number(b.dataset.delta);
      const next = structuredClone(pos);
      if (delta > 0 && placed(side) >= variant().checkers) return full(side);
      if (delta < 0 && next[where][side] === 0) return;
      next[where][side] += delta;
      send(next);
    });
  }
  $("start-position").addEventListener("click", () => ask({ action: "start" }));
  $("clear").addEventListener("click", () => ask({ action: "clear" }));
  $("swap").addEventListener("click", () => ask({ position: JSON.stringify(pos), action: "flip" }));
  $("load").addEventListener("click", () => ask({ position: $("position").value, action: "show" }));
  $("variant").addEventListener("change", () => {
    $("cube-owner-label").hidden = !variant().cube;
    for (const s of [0, 1]) $("bar-counter-" + s).hidden = !variant().bar; // no hitting: no bar
    ask({ action: "start" });
  });
  // Enter in the position field shows it; the form is sent by the Analyse button.
  $("position").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") {
      ev.preventDefault();
      ask({ position: $("position").value, action: "show" });
    }
  });
  const svg = boardEl.querySelector("svg");
  if (svg) {
    svg.removeAttribute("width");
    svg.removeAttribute("height");
  }
})();
