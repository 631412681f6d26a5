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

  function pinnedOf(side) {
    // A pinned checker lies beneath the other side's stack (RULES.md §3.12.2).
    const sign = side === 0 ? -1 : 1;
    return (pos.pinned || []).filter((p) => pos.points[p - 1] * sign > 0).length;
  }

  function placed(side) {
    // Checkers of a side on the board (pinned ones too), the bar and the tray; the rest are
    // still to be placed.
    const sign = side === 0 ? 1 : -1;
    let n = pos.bar[side] + pos.off[side] + pinnedOf(side);
    for (const c of pos.points) if (c * sign > 0) n += c * sign;
    return n;
  }

  // The variant's options (plakoto's mother, the cube's settings…): those that differ from
  // their defaults travel as ?options=name=value,… (as `nardy hint -o` reads them).
  function optionsText() {
    const specs = variant().options;
    const out = [];
    for (const input of document.querySelectorAll("#variant-options [data-option]")) {
      const spec = specs.find((o) => o.name === input.dataset.option);
      if (!spec) continue;
      let value;
      if (spec.kind === "bool") value = input.checked;
      else if (spec.kind === "int") value = input.value === "" ? null : Number(input.value);
      else value = input.value;
      if (value === spec.default) continue;
      out.push(spec.name + "=" + (value === null ? "none" : String(value)));
    }
    return out.join(",");
  }

  function showOptions() {
    const box = $("variant-options");
    for (const label of box.querySelectorAll("label")) label.remove();
    for (const o of variant().options) {
      const { label, input } = variantOptionField(o, String);
      input.setAttribute("form", "none");
      box.append(label);
    }
    box.hidden = !variant().options.length;
    $("options").value = "";
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
    $("cube-owner-label").hidden = !data.cube; // the options may turn the cube on or off
  }

  async function ask(params) {
    if (busy) return false;
    busy = true;
    form.dataset.busy = "1"; // tests (and styles) wait for the answer
    $("error").textContent = "";
    try {
      const query = new URLSearchParams({ variant: $("variant").value, options: optionsText(), ...params });
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
    if (mode === "pin") {
      // Pin one checker of the other side beneath the stack on this point, or free it (back
      // among those to place).
      const pins = new Set(next.pinned || []);
      if (n === 0) {
        $("error").textContent = "No stack on point " + point + " to pin a checker beneath.";
        return;
      }
      if (pins.has(point)) pins.delete(point);
      else {
        const under = n > 0 ? 1 : 0; // the side whose checker lies beneath
        if (placed(under) >= variant().checkers) return full(under);
        pins.add(point);
      }
      next.pinned = [...pins].sort((a, b) => a - b);
      if (!next.pinned.length) delete next.pinned;
      send(next);
      return;
    }
    if (mode === "remove") {
      if (n !== 0 && Math.abs(n) === 1 && (next.pinned || []).includes(point)) {
        $("error").textContent = "Free the checker pinned on point " + point + " first.";
        return;
      }
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

  // Dragging a checker (mouse, pen or finger: pointer events) from one point to another, or to
  // the bar or the tray: the checker on top moves there (its side's bar and tray).
  let drag = null; // {from, side, id, moved}
  function placeAt(x, y) {
    const el = document.elementFromPoint(x, y);
    if (!el || !boardEl.contains(el)) return null;
    const target = el.closest("[data-point], rect.bar, rect.tray");
    if (!target) return null;
    if (target.matches("rect.bar")) return "bar";
    if (target.matches("rect.tray")) return "off";
    const p = Number(target.dataset.point);
    return Number.isInteger(p) && p >= 1 && p <= 24 ? p : null;
  }
  function mark(cls, point) {
    for (const el of boardEl.querySelectorAll("." + cls)) el.classList.remove(cls);
    if (typeof point !== "number") return;
    const el = boardEl.querySelector('polygon.point[data-point="' + point + '"]');
    if (el) el.classList.add(cls);
  }
  boardEl.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0 || ev.shiftKey) return;
    const p = pointOf(ev);
    if (p === null || pos.points[p - 1] === 0) return;
    drag = { from: p, side: pos.points[p - 1] > 0 ? 0 : 1, id: ev.pointerId, moved: false };
    mark("drag-from", p);
  });
  boardEl.addEventListener("pointermove", (ev) => {
    if (!drag || ev.pointerId !== drag.id) return;
    const to = placeAt(ev.clientX, ev.clientY);
    if (to !== drag.from) drag.moved = true;
    mark("drag-over", to === drag.from ? null : to);
    if (drag.moved) ev.preventDefault();
  });
  function endDrag(ev) {
    if (!drag || ev.pointerId !== drag.id) return;
    const d = drag;
    drag = null;
    mark("drag-from", null);
    mark("drag-over", null);
    if (ev.type === "pointercancel" || !d.moved) return;
    const to = placeAt(ev.clientX, ev.clientY);
    dragged = true; // the click that follows a drag is no click
    setTimeout(() => { dragged = false; }, 0);
    if (to === null || to === d.from) return;
    move(d.from, d.side, to);
  }
  boardEl.addEventListener("pointerup", endDrag);
  boardEl.addEventListener("pointercancel", endDrag);
  let dragged = false;

  function move(from, side, to) {
    const next = structuredClone(pos);
    const sign = side === 0 ? 1 : -1;
    if ((next.pinned || []).includes(from) && Math.abs(next.points[from - 1]) === 1) {
      $("error").textContent = "Free the checker pinned on point " + from + " first.";
      return;
    }
    if (typeof to === "number") {
      if (next.points[to - 1] * sign < 0) {
        $("error").textContent = "Point " + to + " holds the other side's checkers: remove them first.";
        return;
      }
      next.points[to - 1] += sign;
    } else if (to === "bar" && !variant().bar) {
      $("error").textContent = variant().name + " has no bar (nobody is hit).";
      return;
    } else {
      next[to][side] += 1;
    }
    next.points[from - 1] -= sign;
    send(next);
  }

  boardEl.addEventListener("click", (ev) => {
    if (dragged) return;
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
    $("pin-mode").hidden = !variant().pins;
    if (!variant().pins && form.querySelector("input[name=edit][value=pin]").checked) {
      form.querySelector("input[name=edit][value=mover]").checked = true;
    }
    showOptions();
    ask({ action: "start" });
  });
  $("variant-options").addEventListener("change", () => {
    $("options").value = optionsText();
    stale();
    // Redrawn with the options (the cube's, say), the position kept.
    ask({ position: JSON.stringify(pos), action: "show" });
  });
  form.addEventListener("submit", () => {
    $("options").value = optionsText();
    if (!$("options").value) $("options").disabled = true; // no empty ?options= in the URL
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
