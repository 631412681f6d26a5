// nardy spectator: live standings (server-sent events) and stepping through a game's decisions.
// The pages work without this script: every step is a link (?ply=N), standings a reload away.
"use strict";

function liveStandings() {
  const box = document.getElementById("live");
  if (!box || !box.dataset.live || !window.EventSource) return;
  const source = new EventSource(box.dataset.live);
  const badge = document.getElementById("live-badge");
  source.addEventListener("standings", (event) => {
    box.innerHTML = event.data;
    if (badge) badge.classList.add("on");
  });
  source.addEventListener("done", () => {
    source.close();
    if (badge) { badge.classList.remove("on"); badge.textContent = "ended"; }
  });
}

function gameStepper() {
  const frame = document.getElementById("step-frame");
  if (!frame) return;
  const base = frame.dataset.partialBase;  // ends with "ply=" once the trailing digit is cut
  const cache = new Map();
  let busy = null;

  function fetchStep(ply) {
    if (!cache.has(ply)) {
      cache.set(ply, fetch(base + ply).then((r) => {
        if (!r.ok) { cache.delete(ply); throw new Error(r.statusText); }
        return r.text();
      }));
    }
    return cache.get(ply);
  }

  function current() {
    const step = document.getElementById("step");
    return { ply: Number(step.dataset.ply), plies: Number(step.dataset.plies) };
  }

  async function go(ply) {
    const { plies } = current();
    ply = Math.min(Math.max(ply, 1), plies);
    const html = await fetchStep(ply);
    frame.innerHTML = html;
    const url = new URL(window.location.href);
    url.searchParams.set("ply", String(ply));
    history.replaceState(null, "", url);
    document.querySelectorAll(".moves li").forEach((li) => {
      li.classList.toggle("current", Number(li.dataset.ply) === ply);
    });
    const here = document.querySelector(".moves li.current");
    if (here) here.scrollIntoView({ block: "nearest" });
    if (ply < plies) fetchStep(ply + 1).catch(() => {});
  }

  function queue(ply) {
    busy = (busy || Promise.resolve()).then(() => go(ply)).catch(() => {
      window.location.href = base.replace(/&partial=1/, "").replace(/partial=1&?/, "") + ply;
    });
  }

  // Autoplay: the same step-swapping, one step per interval, stopping at the final position.
  const button = document.getElementById("autoplay");
  let timer = null;

  function playing(on) {
    if (timer) { clearInterval(timer); timer = null; }
    if (on) {
      timer = setInterval(() => {
        const { ply, plies } = current();
        if (ply >= plies) { playing(false); return; }
        queue(ply + 1);
      }, Number(button.dataset.interval) || 1000);
    }
    button.textContent = on ? "❚❚ Pause" : "▶ Play";
    button.setAttribute("aria-pressed", on ? "true" : "false");
  }

  function toggle() {
    if (!timer) {
      const { ply, plies } = current();
      if (ply >= plies) queue(1);  // from the end: play the game again
    }
    playing(!timer);
  }

  if (button) {
    document.getElementById("autoplay-box").hidden = false;  // without the script: no button
    button.addEventListener("click", toggle);
  }

  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (["INPUT", "SELECT", "TEXTAREA"].includes(document.activeElement.tagName)) return;
    if (button && (event.key === "p" || event.key === "P")) { event.preventDefault(); toggle(); return; }
    const { ply, plies } = current();
    const target = { ArrowLeft: ply - 1, ArrowRight: ply + 1, Home: 1, End: plies }[event.key];
    if (target === undefined) return;
    event.preventDefault();
    queue(target);
  });
  document.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-ply]");
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
    event.preventDefault();
    queue(Number(link.dataset.ply));
  });
}

document.addEventListener("DOMContentLoaded", () => {
  liveStandings();
  gameStepper();
});
