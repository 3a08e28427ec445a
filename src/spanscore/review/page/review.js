// The review page: one item at a time, one key per verdict. Every piece of annotation text reaches
// the page through textContent (never markup), and the reviewer's token lives in this tab's
// sessionStorage, sent only as an Authorization header and kept out of every URL.
"use strict";

(function () {
  const TOKEN_KEY = "spanscore-review-token";
  const WINDOW = 300; // characters of context kept either side of the spans in a long sentence
  const state = { task: null, item: null, busy: false, filters: { criterion: "", type: "" } };
  const $ = (id) => document.getElementById(id);

  function takeToken() {
    // The token arrives once, in the fragment (#token=...), which browsers never send to a server;
    // ?token=... works too. Either way it is moved to sessionStorage and the address bar cleaned.
    const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
    const fromQuery = new URLSearchParams(location.search).get("token");
    const given = fromHash || fromQuery;
    if (given) {
      sessionStorage.setItem(TOKEN_KEY, given);
      history.replaceState(null, "", location.pathname);
    }
    return sessionStorage.getItem(TOKEN_KEY);
  }

  async function api(method, path, body) {
    const headers = { Authorization: "Bearer " + state.token };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer",
    });
    let data = {};
    try { data = await response.json(); } catch (e) { data = {}; }
    if (response.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      show("signin");
      throw new Error("not signed in");
    }
    if (!response.ok) throw new Error(data.error || ("the server answered " + response.status));
    return data;
  }

  function show(which) {
    for (const id of ["signin", "done", "item"]) $(id).hidden = id !== which;
  }

  function say(text) { $("status").textContent = text || ""; }

  function query(extra) {
    const params = new URLSearchParams();
    if (state.filters.criterion) params.set("criterion", state.filters.criterion);
    if (state.filters.type) params.set("type", state.filters.type);
    for (const [k, v] of Object.entries(extra || {})) params.set(k, String(v));
    const text = params.toString();
    return text ? "?" + text : "";
  }

  function fillSelect(select, counts) {
    for (const [value, n] of Object.entries(counts)) {
      const option = document.createElement("option");
      option.value = value;
      option.textContent = value + " (" + n + ")";
      select.appendChild(option);
    }
  }

  function progress(judged, total) {
    $("progress-text").textContent = judged + " of " + total + " judged";
    $("bar-fill").style.width = total ? (100 * judged / total).toFixed(1) + "%" : "0";
  }

  // A side's stretches to mark: a discontinuous mention's fragments (its gaps stay unmarked), else
  // its one span.
  function stretches(side) {
    const given = Array.isArray(side.fragments) && side.fragments.length
      ? side.fragments.map(([start, end]) => ({ start, end })) : [{ start: side.start, end: side.end }];
    return given.filter((s) => s.start !== null && s.end !== null && s.start !== undefined
      && s.end !== undefined);
  }

  // The sentence cut at every span boundary; each piece says which spans cover it.
  function pieces(sentence, ref, pred) {
    const spans = [...stretches(ref).map((s) => ["ref", s]), ...stretches(pred).map((s) => ["pred", s])]
      .filter(([, s]) => s.start >= 0 && s.end <= sentence.length && s.start < s.end);
    if (!spans.length) return { parts: [{ text: sentence, kinds: [] }], cutLeft: false, cutRight: false };
    let lo = 0, hi = sentence.length;
    const first = Math.min(...spans.map(([, s]) => s.start)), last = Math.max(...spans.map(([, s]) => s.end));
    if (sentence.length > 2 * WINDOW + (last - first)) {
      lo = Math.max(0, first - WINDOW);
      hi = Math.min(sentence.length, last + WINDOW);
    }
    const cuts = new Set([lo, hi]);
    for (const [, s] of spans) { cuts.add(s.start); cuts.add(s.end); }
    const points = [...cuts].filter((c) => c >= lo && c <= hi).sort((a, b) => a - b);
    const parts = [];
    for (let i = 0; i + 1 < points.length; i++) {
      const [a, b] = [points[i], points[i + 1]];
      // A span cut into pieces by the other one's ends keeps one outline: only its first piece is
      // open on the left and its last closed on the right (each fragment has its own outline).
      const kinds = spans.filter(([, s]) => s.start <= a && b <= s.end)
        .map(([k, s]) => [k, s.start === a, s.end === b]);
      parts.push({ text: sentence.slice(a, b), kinds });
    }
    return { parts, cutLeft: lo > 0, cutRight: hi < sentence.length };
  }

  function renderSentence(item) {
    const box = $("sentence");
    box.replaceChildren();
    if (!item.sentence) {
      const none = document.createElement("span");
      none.className = "gap";
      none.textContent = "(no sentence came with this pair)";
      box.appendChild(none);
      return;
    }
    const { parts, cutLeft, cutRight } = pieces(item.sentence, item.reference, item.predicted);
    const gap = () => { const g = document.createElement("span"); g.className = "gap"; g.textContent = "…"; return g; };
    if (cutLeft) box.appendChild(gap());
    for (const part of parts) {
      let node = document.createTextNode(part.text);
      for (const [kind, opens, closes] of part.kinds) {
        const wrap = document.createElement("span");
        wrap.className = kind + (opens ? " opens" : "") + (closes ? " closes" : "");
        wrap.dataset.span = kind;
        wrap.appendChild(node);
        node = wrap;
      }
      box.appendChild(node);
    }
    if (cutRight) box.appendChild(gap());
  }

  function render(item) {
    state.item = item;
    if (!item) { show("done"); return; }
    show("item");
    $("position").textContent = String(item.position);
    $("item-criterion").textContent = item.criterion;
    $("item-credit").textContent = "credit " + item.credit;
    const p = $("item-probability");
    p.hidden = item.probability === null || item.probability === undefined;
    if (!p.hidden) p.textContent = "judge " + Number(item.probability).toFixed(2);
    renderSentence(item);
    $("ref-text").textContent = item.reference.text;
    // Where the run read nesting levels, each side's label names its level too.
    $("ref-label").textContent = item.reference.label + (item.reference.level ? " · " + item.reference.level : "");
    $("pred-text").textContent = item.predicted.text;
    $("pred-label").textContent = item.predicted.label + (item.predicted.level ? " · " + item.predicted.level : "");
  }

  function verdictKeys() {
    // Good/Bad: G and B; scores: the digits 1-5, named as Nejadgholi et al. (2020) describe them.
    if (state.task.scale === "goodbad") return [["g", 1, "Good"], ["b", 0, "Bad"]];
    const names = ["wrong", "key part missing", "could be more complete", "equally correct", "more complete"];
    return names.map((name, k) => [String(k + 1), k + 1, name]);
  }

  function buildControls() {
    const box = $("verdicts");
    box.replaceChildren();
    for (const [key, verdict, name] of verdictKeys()) {
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.verdict = String(verdict);
      if (state.task.scale === "goodbad") button.className = verdict === 1 ? "good" : "bad";
      button.append(name);
      const k = document.createElement("kbd");
      k.textContent = key.toUpperCase();
      button.appendChild(k);
      button.addEventListener("click", () => judge(verdict));
      box.appendChild(button);
    }
    const keys = $("keys");
    keys.replaceChildren();
    const rows = verdictKeys().map(([k, , name]) => [k.toUpperCase(), name]);
    rows.push(["S", "skip (it comes back at the end)"], ["Backspace", "undo your last verdict"], ["?", "guidelines"]);
    for (const [k, what] of rows) {
      const li = document.createElement("li");
      const kbd = document.createElement("kbd");
      kbd.textContent = k;
      li.append(kbd, what);
      keys.appendChild(li);
    }
    $("guidelines-goodbad").hidden = state.task.scale !== "goodbad";
    $("guidelines-five").hidden = state.task.scale === "goodbad";
  }

  async function refreshHistory() {
    const data = await api("GET", "/api/history");
    const list = $("history");
    list.replaceChildren();
    for (const h of data.history) {
      const li = document.createElement("li");
      const v = document.createElement("span");
      v.className = "v" + (h.name === "Good" ? " good" : h.name === "Bad" ? " bad" : "");
      v.textContent = h.name;
      const pair = document.createElement("span");
      pair.className = "pair";
      pair.textContent = h.reference + " → " + h.predicted;
      li.append(v, pair);
      list.appendChild(li);
    }
  }

  async function next(extra) {
    const data = await api("GET", "/api/next" + query(extra));
    progress(data.judged, data.total);
    render(data.item);
  }

  async function guarded(work) {
    if (state.busy) return;
    state.busy = true;
    document.body.dataset.busy = "1"; // scripts driving the page wait for "0"
    try { say(""); await work(); }
    catch (e) { if (e.message !== "not signed in") say(e.message); }
    finally { state.busy = false; document.body.dataset.busy = "0"; }
  }

  function judge(verdict) {
    return guarded(async () => {
      if (!state.item) return;
      await api("POST", "/api/judgements", { item: state.item.id, verdict });
      // on from here: items skipped earlier come back once the end is reached
      await next({ after: state.item.position });
      await refreshHistory();
    });
  }

  function skip() {
    return guarded(async () => { if (state.item) await next({ after: state.item.position }); });
  }

  function undo() {
    return guarded(async () => {
      const data = await api("POST", "/api/undo");
      if (data.undone === null) { say("nothing to undo"); return; }
      const counts = await api("GET", "/api/next" + query());
      progress(counts.judged, counts.total);
      render(data.item);
      await refreshHistory();
    });
  }

  function toggleGuidelines() {
    const dialog = $("guidelines");
    if (dialog.open) dialog.close(); else dialog.showModal();
  }

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    if ($("guidelines").open) { if (event.key === "?") { event.preventDefault(); toggleGuidelines(); } return; }
    const target = event.target;
    if (target && (target.tagName === "SELECT" || target.tagName === "INPUT")) return;
    if (!state.task) return;
    const key = event.key.toLowerCase();
    const hit = verdictKeys().find(([k]) => k === key);
    if (hit) { event.preventDefault(); judge(hit[1]); }
    else if (key === "s" || event.key === "ArrowRight") { event.preventDefault(); skip(); }
    else if (event.key === "Backspace") { event.preventDefault(); undo(); }
    else if (event.key === "?") { event.preventDefault(); toggleGuidelines(); }
  }

  async function start() {
    state.token = takeToken();
    if (!state.token) { show("signin"); return; }
    try {
      state.task = await api("GET", "/api/task");
    } catch (e) {
      if (e.message !== "not signed in") say(e.message);
      return;
    }
    $("task").textContent = "· " + state.task.task + " · " + state.task.reviewer;
    const size = Object.values(state.task.criteria).reduce((a, b) => a + b, 0);
    $("task-size").textContent = String(size);
    fillSelect($("criterion"), state.task.criteria);
    fillSelect($("type"), state.task.types);
    buildControls();
    for (const name of ["criterion", "type"]) {
      $(name).addEventListener("change", () => {
        state.filters[name] = $(name).value;
        $(name).blur(); // keys go back to judging at once
        guarded(() => next());
      });
    }
    $("skip").addEventListener("click", skip);
    $("undo").addEventListener("click", undo);
    $("help-button").addEventListener("click", toggleGuidelines);
    $("close-guidelines").addEventListener("click", () => $("guidelines").close());
    document.addEventListener("keydown", onKey);
    await guarded(async () => { await next(); await refreshHistory(); });
    document.body.dataset.ready = "1";
  }

  document.addEventListener("DOMContentLoaded", start);
})();
