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
    const episode = $("detail-episode"); clear(episode);
    if (!m.episode) episode.appendChild(el("p", "Not part of an episode.", "missing"));
    else {
      const e = m.episode;
      episode.appendChild(el("p", e.summary + " (" + when(e.start) + " – " + when(e.end) + ", importance " + e.importance +
        ", " + e.size + " memories" + (e.gone ? ", " + e.gone + " gone" : "") + ")"));
      const members = el("ol");
      e.members.forEach(function (member) {
        const li = member.private ? el("li", "private (" + member.emotion + ", " + when(member.timestamp) + ")", "private") :
          el("li", member.content + (member.id === m.id ? " (this memory)" : ""));
        if (member.id !== m.id) {
          li.style.cursor = "pointer";
          li.addEventListener("click", function () { openMemory(member.id).catch(function (x) { showError(x.message); }); });
        }
        members.appendChild(li);
      });
      episode.appendChild(members);
    }
    const links = $("detail-links"); clear(links);
    (m.links || []).forEach(function (l) {
      const target = l.target_card;
      const label = !target ? "(gone)" : target.private ? "private memory" : target.content;
      links.appendChild(el("li", l.type + ": " + label));
    });
    showRevision(m);
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

  let shown = null; // the memory the correction form was filled from
  function showRevision(m) {
    shown = m;
    $("revise").hidden = !m.revisable;
    $("r-importance").value = m.private ? "" : String(m.importance);
    $("r-tags").value = m.private ? "" : (m.tags || []).join(", ");
    $("r-tags").placeholder = m.private ? "private: type to replace them" : "comma-separated; replaces them";
    $("r-private").checked = !!m.private;
    $("r-done").textContent = "";
  }

  function tagList(text) {
    return text.split(/[,、，]/).map(function (t) { return t.trim(); }).filter(function (t) { return t; });
  }

  async function reviseSelected() {
    if (!selected || !shown) return;
    const change = {};
    const importance = $("r-importance").value;
    if (importance && (shown.private || Number(importance) !== shown.importance)) change.importance = Number(importance);
    const tags = $("r-tags").value;
    if (shown.private ? tags.trim() : tagList(tags).join(",") !== (shown.tags || []).join(",")) change.tags = tagList(tags);
    const makePrivate = $("r-private").checked;
    if (makePrivate !== !!shown.private) {
      if (!makePrivate && !window.confirm("Make this memory public? Its text will be shown here and written to the workspace files.")) return;
      change.private = makePrivate;
    }
    if (!Object.keys(change).length) { $("r-done").textContent = "nothing to change"; return; }
    const id = selected;
    await api("/api/memories/" + encodeURIComponent(id) + "/revise", { method: "POST", body: JSON.stringify(change) });
    await openMemory(id);
    $("r-done").textContent = "saved (change it back the same way)";
    await loadMemory();
  }

  async function forgetSelected() {
    if (!selected || !window.confirm("Forget this memory for good? This cannot be undone.")) return;
    await api("/api/memories/" + encodeURIComponent(selected) + "/forget", { method: "POST", body: "{}" });
    $("detail").hidden = true;
    selected = null;
    await loadMemory();
  }

  function cardText(card) {
    return card.private ? "private (" + card.emotion + ", " + when(card.timestamp) + ")" : card.content;
  }

  async function loadMerge() {
    const data = await api("/api/merge-candidates");
    const table = $("merge-pairs");
    if (!data.available) { $("merge-summary").textContent = "The memory plugin is not enabled."; table.hidden = true; return; }
    $("merge-summary").textContent = data.pairs.length + " pair(s) among the newest " + data.window + " memories at similarity ≥ " +
      fixed(data.threshold) + " (" + data.threshold_from + "); " +
      (data.keep_both_served ? data.kept + " pair(s) kept both of." : "keep both needs the dedup plugin.");
    table.hidden = data.pairs.length === 0;
    renderKept(data);
    const tbody = table.tBodies[0]; clear(tbody);
    data.pairs.forEach(function (pair) {
      const tr = el("tr");
      tr.dataset.a = pair.a.id; tr.dataset.b = pair.b.id;
      tr.appendChild(el("td", fixed(pair.similarity)));
      [pair.a, pair.b].forEach(function (card) {
        const td = el("td", cardText(card) + (card.protected ? " — protected" : ""), card.private ? "private" : card.protected ? "protected" : "");
        td.addEventListener("click", function () { openMemory(card.id).catch(function (x) { showError(x.message); }); });
        tr.appendChild(td);
      });
      const actions = el("td");
      if (data.keep_both_served) {
        const keep = el("button", "keep both");
        keep.className = "keep-both";
        keep.addEventListener("click", function () { keepBoth(pair, tr, actions).catch(function (x) { showError(x.message); }); });
        actions.appendChild(keep);
      }
      [["a", "b"], ["b", "a"]].forEach(function (which) {
        const gone = pair[which[1]];
        if (!data.forget_served || gone.protected) return;
        const button = el("button", "keep " + which[0].toUpperCase() + ", forget " + which[1].toUpperCase());
        button.addEventListener("click", function () {
          if (!window.confirm("Forget memory " + which[1].toUpperCase() + " for good and keep " + which[0].toUpperCase() + "? This cannot be undone.")) return;
          api("/api/memories/" + encodeURIComponent(gone.id) + "/forget", { method: "POST", body: "{}" })
            .then(loadMerge).catch(function (x) { showError(x.message); });
        });
        actions.appendChild(button);
      });
      tr.appendChild(actions);
      tbody.appendChild(tr);
    });
  }

  function renderKept(data) {
    $("merge-kept-box").hidden = data.kept_pairs.length === 0;
    const tbody = $("merge-kept").tBodies[0]; clear(tbody);
    data.kept_pairs.forEach(function (pair) {
      const tr = el("tr");
      tr.appendChild(el("td", when(pair.kept_at)));
      [pair.a, pair.b].forEach(function (card) {
        tr.appendChild(el("td", card.gone ? "(forgotten)" : cardText(card), card.private ? "private" : ""));
      });
      const td = el("td"); const undo = el("button", "undo keep both");
      undo.className = "undo-keep";
      undo.addEventListener("click", function () {
        api("/api/merge-candidates/unkeep", { method: "POST", body: JSON.stringify({ a: pair.a.id, b: pair.b.id }) })
          .then(loadMerge).catch(function (x) { showError(x.message); });
      });
      td.appendChild(undo); tr.appendChild(td); tbody.appendChild(tr);
    });
  }

  async function keepBoth(pair, row, actions) {
    const ids = JSON.stringify({ a: pair.a.id, b: pair.b.id });
    await api("/api/merge-candidates/keep", { method: "POST", body: ids });
    clear(actions);
    row.classList.add("kept");
    const undo = el("button", "undo");
    undo.className = "undo-keep";
    actions.appendChild(el("span", "kept both "));
    undo.addEventListener("click", function () {
      api("/api/merge-candidates/unkeep", { method: "POST", body: ids }).then(loadMerge).catch(function (x) { showError(x.message); });
    });
    actions.appendChild(undo);
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
    await loadPeople();
  }

  async function loadPeople() {
    const data = await api("/api/people");
    $("people-missing").hidden = data.people !== null;
    const tbody = $("people").tBodies[0]; clear(tbody);
    Object.keys(charts).filter(function (id) { return id.indexOf("trust-") === 0; }).forEach(function (id) {
      charts[id].destroy(); delete charts[id];
    });
    (data.people || []).forEach(function (p, i) {
      const tr = el("tr");
      [p.name, p.trust_words, fixed(p.trust), p.shared].forEach(function (v) { tr.appendChild(el("td", v)); });
      const cell = el("td");
      if (p.trust_history.length) {
        const canvas = el("canvas", null, "spark"); canvas.id = "trust-" + i; canvas.height = 40; canvas.width = 200;
        cell.appendChild(canvas);
      } else cell.appendChild(el("span", "no changes recorded", "missing"));
      tr.appendChild(cell);
      tbody.appendChild(tr);
      if (p.trust_history.length) {
        chart("trust-" + i, { type: "line", data: {
          labels: p.trust_history.map(function (c) { return when(c.at); }),
          datasets: [{ label: "trust", data: p.trust_history.map(function (c) { return c.trust; }), stepped: true, pointRadius: 2 }],
        }, options: { responsive: false, plugins: { legend: { display: false } }, scales: { x: { display: false }, y: { min: 0, max: 1, display: false } } } });
      }
    });
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
    await loadDesireHistory();
    const tbody = $("h-tools").tBodies[0]; clear(tbody);
    Object.entries(data.tools).sort(function (a, b) { return b[1] - a[1]; }).forEach(function (t) {
      const tr = el("tr"); tr.appendChild(el("td", t[0])); tr.appendChild(el("td", t[1])); tbody.appendChild(tr);
    });
  }

  async function loadDesireHistory() {
    const data = await api("/api/history/desires?range=" + encodeURIComponent($("range").value));
    $("h-desires-missing").hidden = data.desires;
    const format = data.range === "24h" ? { hour: "2-digit", minute: "2-digit" } : { month: "short", day: "numeric", hour: "2-digit" };
    $("h-desires-count").textContent = data.desires ? data.samples.length + " samples of " + data.names.length + " desires" : "";
    chart("h-desires", { type: "line", data: {
      labels: data.samples.map(function (s) { return new Date(s.at).toLocaleString(undefined, format); }),
      datasets: data.names.map(function (name) {
        return { label: name, data: data.samples.map(function (s) { return name in s.levels ? s.levels[name] : null; }), spanGaps: true, pointRadius: 0 };
      }),
    }, options: { scales: { y: { min: 0, max: 1 } } } });
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
  let sharedScopes = "";
  let shownPlan = null;

  function row(cells, cls) {
    const tr = el("tr", undefined, cls);
    cells.forEach(function (v) { tr.appendChild(el("td", v === null || v === undefined ? "" : v)); });
    return tr;
  }

  async function loadShared() {
    const query = sharedScopes ? "?scopes=" + encodeURIComponent(sharedScopes) : "";
    const data = await api("/api/shared" + query);
    const status = $("shared-status");
    $("shared-body").hidden = !(data.configured && data.reachable);
    if (!data.enabled) { status.textContent = "The shared memory plugin is not enabled."; return; }
    if (!data.configured) { status.textContent = "The shared memory plugin is enabled but not configured (gateway_url + token, or db + agent_id)."; return; }
    if (!data.reachable) { status.textContent = "The shared memory cannot be read (" + data.where + "): " + data.error; return; }
    status.textContent = "Read as " + data.agent_id + " from the " + data.where + " (" + data.ruleset_stamp + "), scopes " +
      data.scopes.join(", ") + "; snapshot " + data.snapshot_id + ".";
    $("shared-pins").textContent = data.pinned_md || "Nothing pinned yet.";
    const entries = $("shared-entries"); clear(entries);
    Object.keys(data.entries).forEach(function (scope) {
      const tr = el("tr"); tr.appendChild(el("th", scope)); tr.appendChild(el("td", data.entries[scope])); entries.appendChild(tr);
    });
    $("shared-conflict-count").textContent = data.open_conflicts + " open conflict(s) in these scopes.";
    const events = $("shared-events"); clear(events);
    Object.keys(data.events_by_scope).forEach(function (scope) {
      const box = el("div", undefined, "scope-events");
      box.dataset.scope = scope;
      box.appendChild(el("h3", scope));
      const table = el("table", undefined, "rows");
      const head = el("thead"); head.appendChild(row(["when", "by", "kind", "key", "text"])); table.appendChild(head);
      const body = el("tbody");
      const list = data.events_by_scope[scope];
      if (!list.length) body.appendChild(row(["", "", "", "", "no recent events"]));
      list.forEach(function (e) {
        const flags = (data.pinned_event_ids.indexOf(e.event_id) >= 0 ? " [pinned]" : "") + (e.redacted ? " [redacted]" : "") +
          (e.expired ? " [expired]" : "");
        const tr = row([when(e.created_at), e.agent_id, e.kind, e.dedupe_key, e.content_md + flags]);
        tr.dataset.event = e.event_id;
        body.appendChild(tr);
      });
      table.appendChild(body); box.appendChild(table); events.appendChild(box);
    });
    const operatorMissing = $("shared-operator-missing");
    $("shared-operator").hidden = !data.operator || Boolean(data.operator_error);
    operatorMissing.hidden = data.operator && !data.operator_error;
    operatorMissing.textContent = data.operator_error ? "The janitor's part could not be read: " + data.operator_error :
      data.mode === "gateway" ? "Conflicts, the audit trail and cleanup need the gateway's operator token in EGO_DASHBOARD_GATEWAY_TOKEN." :
        "Conflicts, the audit trail and cleanup are read from a gateway; for a local store use `ego shared conflicts`, `audit`, `cleanup`.";
    if (!data.operator || data.operator_error) return;
    const conflicts = $("shared-conflicts").tBodies[0]; clear(conflicts);
    if (!data.conflicts.length) conflicts.appendChild(row(["no open conflicts"]));
    data.conflicts.forEach(function (c) {
      conflicts.appendChild(row([c.scope, c.dedupe_key, c.event_id, c.previous_event_id, when(c.detected_at), c.asked_in || "not asked yet"]));
    });
    const audit = $("shared-audit").tBodies[0]; clear(audit);
    data.audit.forEach(function (a) { audit.appendChild(row([when(a.at), a.actor, a.action, a.event_id, a.detail])); });
  }

  function showPlan(plan) {
    shownPlan = plan;
    $("cleanup-plan").hidden = false;
    $("cleanup-done").textContent = "";
    const counts = Object.keys(plan.counts).map(function (k) { return k + ": " + plan.counts[k]; }).join(", ") || "nothing";
    $("cleanup-plan-summary").textContent = "Plan " + plan.plan_id + " (" + plan.state + ", by " + plan.proposed_by + "): " + plan.total +
      " event(s) (" + counts + ")" + (plan.truncated ? ", more match than one plan holds" : "") +
      (plan.state === "open" ? "; can be confirmed until " + when(plan.expires_at) : "") + ".";
    const tbody = $("cleanup-events").tBodies[0]; clear(tbody);
    plan.events.forEach(function (e) {
      tbody.appendChild(row([e.event_id || "", e.scope || (e.gone ? "(already gone)" : ""), e.kind, e.dedupe_key, e.content_md]));
    });
    if (plan.total > plan.events.length) tbody.appendChild(row(["… and " + (plan.total - plan.events.length) + " more"]));
    $("cleanup-confirm").hidden = !plan.confirmable || plan.total === 0;
  }

  async function proposeCleanup() {
    const body = { where: $("cleanup-where").value, expired: $("cleanup-expired").checked };
    const older = $("cleanup-older").value.trim();
    if (older) body.older_than = older;
    showPlan(await api("/api/shared/cleanup", { method: "POST", body: JSON.stringify(body) }));
  }

  async function lookupPlan() {
    const id = $("cleanup-plan-id").value.trim();
    if (id) showPlan(await api("/api/shared/cleanup/" + encodeURIComponent(id)));
  }

  async function confirmCleanup() {
    if (!shownPlan || !window.confirm("Delete the " + shownPlan.total + " event(s) of plan " + shownPlan.plan_id +
      " from the shared memory for good? This cannot be undone.")) return;
    const done = await api("/api/shared/cleanup/" + encodeURIComponent(shownPlan.plan_id) + "/confirm", { method: "POST", body: "{}" });
    $("cleanup-confirm").hidden = true;
    $("cleanup-done").textContent = "Deleted " + done.deleted + " event(s)" + (done.already_gone ? "; " + done.already_gone + " were already gone" : "") +
      ". Each deletion is in the audit trail.";
    await loadShared();
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
  $("revise").addEventListener("submit", function (event) {
    event.preventDefault();
    reviseSelected().catch(function (x) { showError(x.message); });
  });
  $("merge-load").addEventListener("click", function () { loadMerge().catch(function (x) { showError(x.message); }); });
  $("shared-scopes").addEventListener("submit", function (e) {
    e.preventDefault(); sharedScopes = $("shared-scope-input").value.trim(); loadShared().catch(function (x) { showError(x.message); });
  });
  $("cleanup-form").addEventListener("submit", function (e) { e.preventDefault(); proposeCleanup().catch(function (x) { showError(x.message); }); });
  $("cleanup-lookup").addEventListener("submit", function (e) { e.preventDefault(); lookupPlan().catch(function (x) { showError(x.message); }); });
  $("cleanup-confirm").addEventListener("click", function () { confirmCleanup().catch(function (x) { showError(x.message); }); });
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
