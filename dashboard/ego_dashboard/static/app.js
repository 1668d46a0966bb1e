// ego dashboard: plain JS over the JSON API. Text is only ever set with textContent (never as HTML).
"use strict";
(function () {
  const csrf = document.querySelector('meta[name="ego-csrf"]').content;
  const tokenNeeded = document.querySelector('meta[name="ego-token-needed"]').content === "true";
  let token = null; // kept in this page only, never in the browser's storage
  let current = "now";
  const charts = {};
  let cy = null;
  let selected = null;
  let revealAllowed = false; // ego dashboard --reveal-private

  function $(id) { return document.getElementById(id); }
  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function when(iso) { return iso ? new Date(iso).toLocaleString() : ""; }
  function fixed(x) { return typeof x === "number" ? x.toFixed(2) : ""; }

  function showError(message) {
    const box = $("error");
    box.textContent = message || "";
    box.hidden = !message;
  }

  async function api(path, options) {
    const headers = { "X-Ego-Csrf": csrf, "Accept": "application/json" };
    if (token) headers["Authorization"] = "Bearer " + token;
    const response = await fetch(path, Object.assign({ headers: headers }, options || {}));
    const body = await response.json();
    if (response.status === 401) { $("token-form").hidden = false; }
    if (!response.ok) throw new Error(body.error || response.statusText);
    showError(null);
    return body;
  }

  function chart(id, config) {
    if (charts[id]) charts[id].destroy();
    config.options = Object.assign({ animation: false, responsive: true }, config.options || {});
    charts[id] = new Chart($(id), config);
  }

  // ---- Now
  async function loadNow() {
    const data = await api("/api/now");
    const memory = data.memory;
    const points = memory ? memory.recent_points.map(function (m) { return { x: m.valence, y: m.arousal, label: m.emotion }; }) : [];
    const mean = memory && memory.day.count ? [{ x: memory.day.valence, y: memory.day.arousal }] : [];
    chart("circumplex", {
      type: "scatter",
      data: { datasets: [
        { label: "recent memories", data: points, backgroundColor: "rgba(90,110,200,.5)" },
        { label: "last 24 h (mean)", data: mean, backgroundColor: "#e07b39", pointRadius: 8 },
      ] },
      options: { scales: { x: { min: -1, max: 1, title: { display: true, text: "valence" } },
                           y: { min: 0, max: 1, title: { display: true, text: "arousal" } } } },
    });
    if (!memory) $("feeling-summary").textContent = "The memory plugin is not enabled.";
    else {
      const top = Object.entries(memory.week.primary).sort(function (a, b) { return b[1] - a[1]; }).slice(0, 3);
      $("feeling-summary").textContent = memory.count + " memories; this week mostly " +
        (top.map(function (t) { return t[0] + " (" + t[1] + ")"; }).join(", ") || "nothing yet");
      const list = $("emotions"); clear(list);
      Object.keys(memory.week.primary).forEach(function (e) { const o = el("option"); o.value = e; list.appendChild(o); });
    }
    const desires = data.desires;
    $("desires-missing").hidden = desires !== null;
    $("desires").hidden = desires === null;
    if (desires) {
      chart("desires", { type: "bar", data: { labels: Object.keys(desires), datasets: [
        { label: "level", data: Object.values(desires), backgroundColor: "#6a8caf" }] },
        options: { indexAxis: "y", scales: { x: { min: 0, max: 1 }, y: { ticks: { autoSkip: false } } }, plugins: { legend: { display: false } } } });
    }
    const body = $("body"); clear(body);
    $("body-missing").hidden = data.body !== null;
    if (data.body) {
      const rows = Object.assign({ time_phase: data.body.time_phase }, data.body.state);
      Object.keys(rows).forEach(function (k) {
        const tr = el("tr"); tr.appendChild(el("th", k)); tr.appendChild(el("td", JSON.stringify(rows[k]))); body.appendChild(tr);
      });
    }
    const intro = memory && memory.introspection;
    const introNode = $("introspection");
    introNode.className = intro && intro.private ? "private" : "";
    introNode.textContent = !memory ? "The memory plugin is not enabled." : !intro ? "None yet." :
      intro.private ? "private (" + intro.emotion + ", " + when(intro.timestamp) + ")" : intro.content + " — " + when(intro.timestamp);
    const list = $("now-questions"); clear(list);
    if (data.questions === null) list.appendChild(el("li", "The self_model plugin is not enabled.", "missing"));
    else (data.questions.length ? data.questions : [{ text: "No open questions." }]).forEach(function (q) {
      list.appendChild(el("li", q.state ? q.text + " (" + q.state + ")" : q.text));
    });
  }

  // ---- Memory
  function searchParams() {
    const p = new URLSearchParams();
    const pairs = [["q", "q"], ["emotion", "f-emotion"], ["category", "f-category"], ["date_from", "f-from"],
      ["date_to", "f-to"], ["private", "f-private"], ["min_importance", "f-importance"]];
    pairs.forEach(function (pair) { const v = $(pair[1]).value.trim(); if (v) p.set(pair[0], v); });
    return p;
  }

  async function loadMemory() {
    const data = await api("/api/memories?" + searchParams().toString());
    if (!data.available) { $("memory-count").textContent = "The memory plugin is not enabled."; return; }
    $("memory-count").textContent = data.results.length + " shown of " + data.total + " memories (" + data.mode + ")";
    const tbody = $("results").tBodies[0]; clear(tbody);
    data.results.forEach(function (m) {
      const tr = el("tr");
      tr.dataset.id = m.id;
      tr.appendChild(el("td", when(m.timestamp)));
      tr.appendChild(el("td", m.emotion));
      tr.appendChild(el("td", m.private ? "" : m.category));
      tr.appendChild(el("td", m.private ? "" : m.importance));
      tr.appendChild(m.private ? el("td", "private", "private") : el("td", m.content));
      tr.appendChild(el("td", m.score === null || m.score === undefined ? "" : fixed(m.score)));
      tr.addEventListener("click", function () { openMemory(m.id).catch(function (e) { showError(e.message); }); });
      tbody.appendChild(tr);
    });
  }

  async function openMemory(id) {
    const m = await api("/api/memories/" + encodeURIComponent(id));
    selected = id;
    $("detail").hidden = false;
    const text = $("detail-text");
    text.className = m.private ? "private" : "";
    text.textContent = m.private ? "private memory: its text is not shown" : m.content;
    $("reveal").hidden = !(m.private && revealAllowed);
    const meta = $("detail-meta"); clear(meta);
    const fields = m.private ? ["id", "timestamp", "emotion", "valence", "arousal", "intensity"] :
      ["id", "timestamp", "emotion", "secondary", "valence", "arousal", "intensity", "importance", "category", "tags", "access_count"];
    fields.forEach(function (f) {
      const tr = el("tr"); tr.appendChild(el("th", f));
      const v = m[f];
      tr.appendChild(el("td", Array.isArray(v) ? v.join(", ") : typeof v === "number" ? String(Math.round(v * 100) / 100) :
        f === "timestamp" ? when(v) : v));
      meta.appendChild(tr);
    });
    const links = $("detail-links"); clear(links);
    (m.links || []).forEach(function (l) {
      const target = l.target_card;
      const label = !target ? "(gone)" : target.private ? "private memory" : target.content;
      links.appendChild(el("li", l.type + ": " + label));
    });
    const g = await api("/api/memories/" + encodeURIComponent(id) + "/graph?depth=2");
    await drawGraph(g);
  }

  let graphLibrary = null;
  function loadGraphLibrary() { // loaded on first use: the Now view renders without it
    if (!graphLibrary) graphLibrary = new Promise(function (resolve, reject) {
      const script = document.createElement("script");
      script.src = "/static/vendor/cytoscape.min.js";
      script.onload = resolve;
      script.onerror = function () { reject(new Error("the graph library did not load")); };
      document.head.appendChild(script);
    });
    return graphLibrary;
  }

  async function drawGraph(g) {
    await loadGraphLibrary();
    const elements = g.nodes.map(function (n) {
      const label = n.private ? "private" : (n.content || "").slice(0, 24);
      return { data: { id: n.id, label: label, center: n.id === g.center ? 1 : 0 } };
    }).concat(g.edges.map(function (e, i) { return { data: { id: "e" + i, source: e.source, target: e.target, label: e.type } }; }));
    if (cy) cy.destroy();
    cy = cytoscape({
      container: $("graph"), elements: elements, layout: { name: elements.length > 60 ? "concentric" : "cose", animate: false },
      style: [
        { selector: "node", style: { "label": "data(label)", "font-size": 8, "background-color": "#6a8caf", "width": 12, "height": 12 } },
        { selector: "node[center = 1]", style: { "background-color": "#e07b39", "width": 18, "height": 18 } },
        { selector: "edge", style: { "width": 1, "line-color": "#bbb" } },
      ],
    });
    cy.on("tap", "node", function (evt) { openMemory(evt.target.id()).catch(function (e) { showError(e.message); }); });
  }

  async function revealSelected() {
    if (!selected || !window.confirm("Show this private memory's text on this screen?")) return;
    const answer = await api("/api/memories/" + encodeURIComponent(selected) + "/reveal", { method: "POST", body: "{}" });
    $("detail-text").textContent = answer.content; // shown, never stored
    $("reveal").hidden = true;
  }

  async function forgetSelected() {
    if (!selected || !window.confirm("Forget this memory for good? This cannot be undone.")) return;
    await api("/api/memories/" + encodeURIComponent(selected) + "/forget", { method: "POST", body: "{}" });
    $("detail").hidden = true;
    selected = null;
    await loadMemory();
  }

  // ---- Self
  async function loadSelf() {
    const data = await api("/api/self");
    $("self-missing").hidden = data.questions !== null;
    const tbody = $("questions").tBodies[0]; clear(tbody);
    const qs = data.questions || [];
    qs.forEach(function (q) {
      const tr = el("tr");
      [q.text, q.importance, fixed(q.salience), q.state].forEach(function (v) { tr.appendChild(el("td", v)); });
      const td = el("td"); const button = el("button", "resolve");
      button.addEventListener("click", function () {
        const answer = window.prompt("Resolve this question. Its answer (optional):", "");
        if (answer === null) return;
        api("/api/questions/" + encodeURIComponent(q.id) + "/resolve", { method: "POST", body: JSON.stringify({ answer: answer }) })
          .then(loadSelf).catch(function (e) { showError(e.message); });
      });
      td.appendChild(button); tr.appendChild(td); tbody.appendChild(tr);
    });
    $("notions-missing").hidden = data.notions !== null;
    const nbody = $("notions").tBodies[0]; clear(nbody);
    (data.notions || []).forEach(function (n) {
      const tr = el("tr");
      tr.appendChild(el("td", n.label + (n.conviction ? " (conviction)" : "")));
      const td = el("td"); const bar = el("progress"); bar.max = 1; bar.value = n.confidence;
      td.appendChild(bar); td.appendChild(el("span", " " + fixed(n.confidence))); tr.appendChild(td);
      [n.tone, n.person || "", n.reinforced].forEach(function (v) { tr.appendChild(el("td", v)); });
      const actions = el("td");
      const relabel = el("button", "relabel");
      relabel.addEventListener("click", function () {
        const label = window.prompt("A new label for this notion:", n.label);
        if (!label) return;
        notionAction(n.id, "relabel", { label: label });
      });
      const others = (data.notions || []).filter(function (o) { return o.id !== n.id; });
      const merge = el("button", "merge into…");
      merge.disabled = others.length === 0;
      merge.addEventListener("click", function () {
        const menu = others.map(function (o, i) { return (i + 1) + ". " + o.label; }).join("\n");
        const choice = window.prompt("Merge this notion into which one? (its number)\n" + menu, "");
        const target = others[parseInt(choice, 10) - 1];
        if (target && window.confirm("Merge \"" + n.label + "\" into \"" + target.label + "\"?")) notionAction(n.id, "merge", { into: target.id });
      });
      actions.appendChild(relabel); actions.appendChild(merge); tr.appendChild(actions);
      nbody.appendChild(tr);
    });
    const days = qs.length ? qs[0].curve.map(function (p) { return "+" + p.day + "d"; }) : [];
    chart("salience", { type: "line", data: { labels: days, datasets: qs.slice(0, 10).map(function (q) {
      return { label: q.text.slice(0, 30), data: q.curve.map(function (p) { return p.salience; }), pointRadius: 0 };
    }) }, options: { scales: { y: { min: 0, max: 1 } } } });
  }

  function notionAction(id, action, payload) {
    api("/api/notions/" + encodeURIComponent(id) + "/" + action, { method: "POST", body: JSON.stringify(payload) })
      .then(loadSelf).catch(function (e) { showError(e.message); });
  }

  // ---- History
  async function loadHistory() {
    const data = await api("/api/history?range=" + encodeURIComponent($("range").value));
    const format = data.range === "24h" ? { hour: "2-digit", minute: "2-digit" } : { month: "short", day: "numeric", hour: "2-digit" };
    const labels = data.buckets.map(function (b) { return new Date(b.start).toLocaleString(undefined, format); });
    chart("h-emotion", { type: "line", data: { labels: labels, datasets: [
      { label: "valence", data: data.buckets.map(function (b) { return b.memories ? b.valence : null; }), spanGaps: true, borderColor: "#e07b39" },
      { label: "arousal", data: data.buckets.map(function (b) { return b.memories ? b.arousal : null; }), spanGaps: true, borderColor: "#6a8caf" },
    ] }, options: { scales: { y: { min: -1, max: 1 } } } });
    chart("h-activity", { type: "bar", data: { labels: labels, datasets: [
      { label: "memories", data: data.buckets.map(function (b) { return b.memories || 0; }), backgroundColor: "#9bb59a" },
      { label: "tool calls", data: data.buckets.map(function (b) { return b.tool_calls; }), backgroundColor: "#6a8caf" },
    ] } });
    const tbody = $("h-tools").tBodies[0]; clear(tbody);
    Object.entries(data.tools).sort(function (a, b) { return b[1] - a[1]; }).forEach(function (t) {
      const tr = el("tr"); tr.appendChild(el("td", t[0])); tr.appendChild(el("td", t[1])); tbody.appendChild(tr);
    });
  }

  // ---- Logs
  async function loadLogs() {
    const p = new URLSearchParams({ limit: "200" });
    if ($("log-level").value) p.set("level", $("log-level").value);
    if ($("log-q").value.trim()) p.set("q", $("log-q").value.trim());
    const data = await api("/api/logs?" + p.toString());
    const tbody = $("logs").tBodies[0]; clear(tbody);
    data.rows.slice().reverse().forEach(function (r) {
      const rest = Object.assign({}, r); delete rest.ts; delete rest.level; delete rest.event;
      const tr = el("tr");
      [when(r.ts), r.level, r.event || r.message || "", JSON.stringify(rest)].forEach(function (v) { tr.appendChild(el("td", v)); });
      tbody.appendChild(tr);
    });
  }

  // ---- Shared
  async function loadShared() {
    const data = await api("/api/shared");
    $("shared-status").textContent = !data.enabled ? "The shared memory plugin is not enabled." :
      "The shared memory plugin is enabled" + (data.configured ? " and configured" : " (not configured)") +
      "; its tools: " + data.tools.join(", ") + ". Its gateway's events, pins and audit are read with `ego gateway`.";
  }

  const loaders = { now: loadNow, memory: loadMemory, self: loadSelf, history: loadHistory, logs: loadLogs, shared: loadShared };

  function show(view) {
    current = view;
    document.querySelectorAll("#tabs button").forEach(function (b) { b.classList.toggle("active", b.dataset.view === view); });
    document.querySelectorAll(".view").forEach(function (s) { s.hidden = s.id !== "view-" + view; });
    return loaders[view]().catch(function (e) { showError(e.message); });
  }

  document.querySelectorAll("#tabs button").forEach(function (b) {
    b.addEventListener("click", function () { show(b.dataset.view); });
  });
  $("search").addEventListener("submit", function (e) { e.preventDefault(); loadMemory().catch(function (x) { showError(x.message); }); });
  $("log-filter").addEventListener("submit", function (e) { e.preventDefault(); loadLogs().catch(function (x) { showError(x.message); }); });
  $("range").addEventListener("change", function () { loadHistory().catch(function (x) { showError(x.message); }); });
  $("reveal").addEventListener("click", function () { revealSelected().catch(function (x) { showError(x.message); }); });
  $("forget").addEventListener("click", function () { forgetSelected().catch(function (x) { showError(x.message); }); });
  setInterval(function () {
    if ($("live").checked && current !== "memory" && !document.hidden) loaders[current]().catch(function (e) { showError(e.message); });
  }, 5000);
  function begin() {
    api("/api/status").then(function (status) { revealAllowed = status.reveal_private === true; })
      .catch(function (e) { showError(e.message); });
    show(current);
  }
  $("token-form").addEventListener("submit", function (e) {
    e.preventDefault(); token = $("token").value.trim(); $("token-form").hidden = true; begin();
  });
  if (tokenNeeded) $("token-form").hidden = false;
  else begin();
})();
