// ego dashboard: plain JS over the JSON API. Text is only ever set with textContent (never as HTML).
// Every string shown comes from i18n.js (t for the page's words, name for ego's own names).
"use strict";
(function () {
  const csrf = document.querySelector('meta[name="ego-csrf"]').content;
  // the owner's login is an HttpOnly cookie: this script never holds a token after sending it
  const DICT = window.EGO_I18N;
  const NAMES = window.EGO_NAMES;
  const LANGUAGES = ["en", "ja"];
  const LANG_KEY = "ego.dashboard.language";
  const MIN_BUCKETS = 6; // History shows at least this many buckets before the first one with data
  let current = "now";
  let loggedIn = false;
  const charts = {};
  let cy = null;
  let selected = null;
  let revealAllowed = false; // ego dashboard --reveal-private
  let configured = document.documentElement.lang; // the owner's language (ego init), until /api/status says
  let lang = "en";
  let zone = "UTC"; // settings.timezone, from /api/status

  function $(id) { return document.getElementById(id); }
  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function fixed(x) { return typeof x === "number" ? x.toFixed(2) : ""; }

  // ---- Language and time zone
  function t(key, params) {
    let text = (DICT[lang] || DICT.en)[key];
    if (text === undefined) text = DICT.en[key];
    if (text === undefined) text = key;
    if (params) text = text.replace(/\{(\w+)\}/g, function (whole, k) { return k in params ? String(params[k]) : whole; });
    return text;
  }
  function name(value) { // an emotion, desire, category, state… in the owner's language (else as ego names it)
    if (value === null || value === undefined) return "";
    const names = NAMES[lang];
    return names && Object.prototype.hasOwnProperty.call(names, value) ? names[value] : String(value);
  }
  function chosenLanguage() { // ?lang= first, then the page's switch (kept in localStorage), then ego init's
    const asked = new URLSearchParams(window.location.search).get("lang");
    if (LANGUAGES.indexOf(asked) >= 0) return asked;
    let stored = null;
    try { stored = window.localStorage.getItem(LANG_KEY); } catch (e) { stored = null; }
    if (LANGUAGES.indexOf(stored) >= 0) return stored;
    return LANGUAGES.indexOf(configured) >= 0 ? configured : "en";
  }
  function formatter(options) {
    const locale = lang === "ja" ? "ja-JP" : "en-GB";
    try { return new Intl.DateTimeFormat(locale, Object.assign({ timeZone: zone }, options)); }
    catch (e) { return new Intl.DateTimeFormat(locale, Object.assign({ timeZone: "UTC" }, options)); }
  }
  const FULL = { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23" };
  function when(iso) {
    if (!iso) return "";
    return formatter(Object.assign({}, FULL, lang === "ja" ? { month: "long" } : {})).format(new Date(iso));
  }
  function bucketFormat(range) {
    const month = lang === "ja" ? "long" : "short";
    if (range === "24h") return formatter({ hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
    if (range === "7d") return formatter({ month: month, day: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
    return formatter({ month: month, day: "numeric" });
  }
  function translatePage() {
    document.documentElement.lang = lang;
    document.querySelectorAll("[data-i18n]").forEach(function (node) { node.textContent = t(node.dataset.i18n); });
    document.querySelectorAll("[data-i18n-placeholder]").forEach(function (node) { node.placeholder = t(node.dataset.i18nPlaceholder); });
    document.querySelectorAll("[data-i18n-title]").forEach(function (node) { node.title = t(node.dataset.i18nTitle); });
    document.querySelectorAll("option.name").forEach(function (node) { node.textContent = name(node.value); });
    document.title = t("title");
    $("lang").value = lang;
    ["desires", "body", "self", "notions", "people", "h-desires"].forEach(function (id) {
      const plugin = { desires: "desires", body: "interoception", self: "self_model", notions: "notions", people: "self_model", "h-desires": "desires" }[id];
      $(id + "-missing").textContent = t("missing", { plugin: plugin });
    });
  }
  function setLanguage(chosen) {
    lang = chosen;
    translatePage();
    if (loggedIn) show(current);
  }
  function missing(plugin) { return t("missing", { plugin: plugin }); }

  function showError(message) {
    const box = $("error");
    box.textContent = message || "";
    box.hidden = !message;
  }

  async function api(path, options) {
    const headers = { "X-Ego-Csrf": csrf, "Accept": "application/json" };
    const response = await fetch(path, Object.assign({ headers: headers, credentials: "same-origin" }, options || {}));
    const body = await response.json();
    if (response.status === 401) { $("login-form").hidden = false; $("logout").hidden = true; loggedIn = false; }
    if (!response.ok) throw new Error(body.error || response.statusText);
    showError(null);
    return body;
  }

  function chart(id, config) {
    if (charts[id]) charts[id].destroy();
    config.options = Object.assign({ animation: false, responsive: true }, config.options || {});
    charts[id] = new Chart($(id), config);
  }
  function dropChart(id) {
    if (charts[id]) { charts[id].destroy(); delete charts[id]; }
  }
  const TICKS = { maxRotation: 0, autoSkip: true, autoSkipPadding: 16 }; // horizontal labels, none overlapping

  // ---- Now
  async function loadNow() {
    const data = await api("/api/now");
    const memory = data.memory;
    const empty = !memory || memory.count === 0;
    $("circumplex").hidden = empty;
    $("feeling-empty").hidden = !(memory && memory.count === 0);
    if (empty) dropChart("circumplex");
    else {
      const points = memory.recent_points.map(function (m) { return { x: m.valence, y: m.arousal, label: m.emotion }; });
      const mean = memory.day.count ? [{ x: memory.day.valence, y: memory.day.arousal }] : [];
      chart("circumplex", {
        type: "scatter",
        data: { datasets: [
          { label: t("now.recent"), data: points, backgroundColor: "rgba(90,110,200,.5)" },
          { label: t("now.mean"), data: mean, backgroundColor: "#e07b39", pointRadius: 8 },
        ] },
        options: { scales: { x: { min: -1, max: 1, title: { display: true, text: t("field.valence") } },
                             y: { min: 0, max: 1, title: { display: true, text: t("field.arousal") } } } },
      });
    }
    if (!memory) $("feeling-summary").textContent = missing("memory");
    else if (memory.count === 0) $("feeling-summary").textContent = "";
    else {
      const top = Object.entries(memory.week.primary).sort(function (a, b) { return b[1] - a[1]; }).slice(0, 3);
      $("feeling-summary").textContent = t("now.summary", { count: memory.count,
        top: top.map(function (e) { return name(e[0]) + " (" + e[1] + ")"; }).join(t("fmt.list")) || t("now.nothing") });
      const list = $("emotions"); clear(list);
      Object.keys(memory.week.primary).forEach(function (e) { const o = el("option"); o.value = e; list.appendChild(o); });
    }
    const desires = data.desires;
    $("desires-missing").hidden = desires !== null;
    $("desires").hidden = desires === null;
    if (desires) {
      chart("desires", { type: "bar", data: { labels: Object.keys(desires).map(name), datasets: [
        { label: t("now.level"), data: Object.values(desires), backgroundColor: "#6a8caf" }] },
        options: { aspectRatio: 1.3, indexAxis: "y", scales: { x: { min: 0, max: 1 }, y: { ticks: { autoSkip: false } } },
                   plugins: { legend: { display: false } } } });
    }
    const body = $("body"); clear(body);
    $("body-missing").hidden = data.body !== null;
    if (data.body) {
      const rows = Object.assign({ time_phase: data.body.time_phase }, data.body.state);
      Object.keys(rows).forEach(function (k) {
        const tr = el("tr"); tr.appendChild(el("th", name(k)));
        tr.appendChild(el("td", typeof rows[k] === "string" ? name(rows[k]) : JSON.stringify(rows[k]))); body.appendChild(tr);
      });
    }
    const ran = data.last_introspect;
    $("introspect-ran").textContent = ran.at ? t("intro.ran", { when: when(ran.at) }) : t("intro.never", { days: ran.days });
    const intro = memory && memory.introspection;
    const introNode = $("introspection");
    introNode.className = intro && intro.private ? "private" : !intro ? "empty" : "";
    introNode.textContent = !memory ? missing("memory") : !intro ? t("intro.none") :
      intro.private ? t("intro.noted.private", { emotion: name(intro.emotion), when: when(intro.timestamp) }) :
        t("intro.noted", { when: when(intro.timestamp), text: intro.content });
    const list = $("now-questions"); clear(list);
    if (data.questions === null) list.appendChild(el("li", missing("self_model"), "missing"));
    else if (!data.questions.length) list.appendChild(el("li", t("now.questions.empty"), "empty"));
    else data.questions.forEach(function (q) { list.appendChild(el("li", q.text + " (" + name(q.state) + ")")); });
  }

  // ---- Memory
  function searchParams() {
    const p = new URLSearchParams();
    const pairs = [["q", "q"], ["emotion", "f-emotion"], ["category", "f-category"], ["date_from", "f-from"],
      ["date_to", "f-to"], ["private", "f-private"], ["min_importance", "f-importance"]];
    pairs.forEach(function (pair) { const v = $(pair[1]).value.trim(); if (v) p.set(pair[0], v); });
    if (revealAllowed && $("f-private-text").checked && p.get("q")) p.set("private_text", "1"); // logged, never the words
    return p;
  }

  function privateCard(card) { return t("private.card", { emotion: name(card.emotion), when: when(card.timestamp) }); }

  async function loadMemory() {
    const data = await api("/api/memories?" + searchParams().toString());
    const emptyNote = $("memory-empty");
    if (!data.available) { $("memory-count").textContent = missing("memory"); $("results").hidden = true; return; }
    $("memory-count").textContent = data.total ? t("memory.count", { shown: data.results.length, total: data.total, mode: t("mode." + data.mode) }) : "";
    emptyNote.hidden = data.results.length > 0;
    emptyNote.textContent = data.total === 0 ? t("memory.empty") : t("memory.nomatch");
    $("results").hidden = data.results.length === 0;
    const tbody = $("results").tBodies[0]; clear(tbody);
    data.results.forEach(function (m) {
      const tr = el("tr");
      tr.dataset.id = m.id;
      tr.appendChild(el("td", when(m.timestamp)));
      tr.appendChild(el("td", name(m.emotion)));
      tr.appendChild(el("td", m.private ? "" : name(m.category)));
      tr.appendChild(el("td", m.private ? "" : m.importance));
      tr.appendChild(m.private ? el("td", t("private"), "private") : el("td", m.content));
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
    text.textContent = m.private ? t("detail.private") : m.content;
    $("reveal").hidden = !(m.private && revealAllowed);
    const meta = $("detail-meta"); clear(meta);
    const fields = m.private ? ["id", "timestamp", "emotion", "valence", "arousal", "intensity"] :
      ["id", "timestamp", "emotion", "secondary", "valence", "arousal", "intensity", "importance", "category", "tags", "access_count"];
    const named = { emotion: true, category: true, secondary: true };
    fields.forEach(function (f) {
      const tr = el("tr"); tr.appendChild(el("th", t("field." + f)));
      const v = m[f];
      tr.appendChild(el("td", Array.isArray(v) ? v.map(named[f] ? name : String).join(t("fmt.list")) :
        typeof v === "number" ? String(Math.round(v * 100) / 100) : f === "timestamp" ? when(v) : named[f] ? name(v) : v));
      meta.appendChild(tr);
    });
    const episode = $("detail-episode"); clear(episode);
    if (!m.episode) episode.appendChild(el("p", t("detail.no_episode"), "missing"));
    else {
      const e = m.episode;
      episode.appendChild(el("p", t("episode.line", { summary: e.summary, start: when(e.start), end: when(e.end),
        importance: e.importance, size: e.size, gone: e.gone ? t("episode.gone", { gone: e.gone }) : "" })));
      const members = el("ol");
      e.members.forEach(function (member) {
        const li = member.private ? el("li", privateCard(member), "private") :
          el("li", member.content + (member.id === m.id ? t("detail.this") : ""));
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
      const label = !target ? t("detail.gone") : target.private ? t("detail.private_memory") : target.content;
      links.appendChild(el("li", name(l.type) + ": " + label));
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

  function overlaps(a, b) { return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h; }

  // The graph's labels are page elements placed beside their dots where they cover no other label and no dot;
  // a label with no free place is left out (hovering its dot shows it).
  function placeLabels() {
    const layer = $("graph-labels"); clear(layer);
    if (!cy) return;
    const area = { w: $("graph").clientWidth, h: $("graph").clientHeight };
    const taken = cy.nodes().map(function (n) {
      const p = n.renderedPosition(); const r = n.renderedWidth() / 2;
      return { x: p.x - r, y: p.y - r, w: 2 * r, h: 2 * r };
    });
    const order = cy.nodes().sort(function (a, b) { return b.data("center") - a.data("center") || a.data("depth") - b.data("depth"); });
    let left = 0;
    order.forEach(function (n) {
      const span = el("span", n.data("label"), "graph-label" + (n.data("center") ? " center" : "") + (n.data("private") ? " private" : ""));
      layer.appendChild(span);
      const w = span.offsetWidth; const h = span.offsetHeight;
      const p = n.renderedPosition(); const r = n.renderedWidth() / 2 + 2;
      const spots = [[p.x - w / 2, p.y - r - h], [p.x - w / 2, p.y + r], [p.x + r, p.y - h / 2], [p.x - r - w, p.y - h / 2]];
      const fits = spots.map(function (s) { return { x: s[0], y: s[1], w: w, h: h }; }).find(function (box) {
        return box.x >= 0 && box.y >= 0 && box.x + box.w <= area.w && box.y + box.h <= area.h &&
          !taken.some(function (other) { return overlaps(box, other); });
      });
      if (!fits) { layer.removeChild(span); left += 1; return; }
      span.style.left = fits.x + "px"; span.style.top = fits.y + "px";
      taken.push(fits);
    });
    const more = $("graph-more");
    more.hidden = left === 0;
    more.textContent = t("graph.more", { count: left });
  }
  let placing = 0;
  function placeSoon() { if (!placing) placing = window.requestAnimationFrame(function () { placing = 0; placeLabels(); }); }

  async function drawGraph(g) {
    await loadGraphLibrary();
    const elements = g.nodes.map(function (n) {
      const label = n.private ? t("private") : (n.content || "").slice(0, 24) + ((n.content || "").length > 24 ? "…" : "");
      return { data: { id: n.id, label: label, center: n.id === g.center ? 1 : 0, depth: n.depth || 0, private: n.private ? 1 : 0 } };
    }).concat(g.edges.map(function (e, i) { return { data: { id: "e" + i, source: e.source, target: e.target, label: e.type } }; }));
    if (cy) cy.destroy();
    cy = cytoscape({
      container: $("graph"), elements: elements, layout: { name: elements.length > 60 ? "concentric" : "cose", animate: false, padding: 40 },
      style: [
        { selector: "node", style: { "background-color": "#6a8caf", "width": 12, "height": 12 } },
        { selector: "node[center = 1]", style: { "background-color": "#e07b39", "width": 18, "height": 18 } },
        { selector: "edge", style: { "width": 1, "line-color": "#bbb" } },
      ],
    });
    cy.on("tap", "node", function (evt) { openMemory(evt.target.id()).catch(function (e) { showError(e.message); }); });
    const tip = $("graph-tip");
    cy.on("mouseover", "node", function (evt) {
      const p = evt.target.renderedPosition();
      tip.textContent = evt.target.data("label"); tip.style.left = (p.x + 10) + "px"; tip.style.top = (p.y + 10) + "px"; tip.hidden = false;
    });
    cy.on("mouseout", "node", function () { tip.hidden = true; });
    cy.on("viewport position layoutstop resize", placeSoon);
    placeLabels();
  }

  async function revealSelected() {
    if (!selected || !window.confirm(t("ask.reveal"))) return;
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
    $("r-tags").placeholder = m.private ? t("revise.tags.private") : t("revise.tags.placeholder");
    $("r-private").checked = !!m.private;
    $("r-done").textContent = "";
  }

  function tagList(text) {
    return text.split(/[,、，]/).map(function (x) { return x.trim(); }).filter(function (x) { return x; });
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
      if (!makePrivate && !window.confirm(t("ask.public"))) return;
      change.private = makePrivate;
    }
    if (!Object.keys(change).length) { $("r-done").textContent = t("revise.nothing"); return; }
    const id = selected;
    await api("/api/memories/" + encodeURIComponent(id) + "/revise", { method: "POST", body: JSON.stringify(change) });
    await openMemory(id);
    $("r-done").textContent = t("revise.saved");
    await loadMemory();
  }

  async function forgetSelected() {
    if (!selected || !window.confirm(t("ask.forget"))) return;
    await api("/api/memories/" + encodeURIComponent(selected) + "/forget", { method: "POST", body: "{}" });
    $("detail").hidden = true;
    selected = null;
    await loadMemory();
  }

  function cardText(card) { return card.private ? privateCard(card) : card.content; }

  async function loadMerge() {
    const data = await api("/api/merge-candidates");
    const table = $("merge-pairs");
    if (!data.available) { $("merge-summary").textContent = missing("memory"); table.hidden = true; return; }
    $("merge-summary").textContent = t("merge.summary", { pairs: data.pairs.length, window: data.window, threshold: fixed(data.threshold),
      source: name(data.threshold_from), kept: data.keep_both_served ? t("merge.kept", { kept: data.kept }) : t("merge.no_dedup") });
    table.hidden = data.pairs.length === 0;
    renderKept(data);
    const tbody = table.tBodies[0]; clear(tbody);
    data.pairs.forEach(function (pair) {
      const tr = el("tr");
      tr.dataset.a = pair.a.id; tr.dataset.b = pair.b.id;
      tr.appendChild(el("td", fixed(pair.similarity)));
      [pair.a, pair.b].forEach(function (card) {
        const td = el("td", cardText(card) + (card.protected ? t("merge.protected") : ""), card.private ? "private" : card.protected ? "protected" : "");
        td.addEventListener("click", function () { openMemory(card.id).catch(function (x) { showError(x.message); }); });
        tr.appendChild(td);
      });
      const actions = el("td");
      if (data.keep_both_served) {
        const keep = el("button", t("merge.keep_both"));
        keep.className = "keep-both";
        keep.addEventListener("click", function () { keepBoth(pair, tr, actions).catch(function (x) { showError(x.message); }); });
        actions.appendChild(keep);
      }
      [["a", "b"], ["b", "a"]].forEach(function (which) {
        const gone = pair[which[1]];
        if (!data.forget_served || gone.protected) return;
        const names = { keep: which[0].toUpperCase(), forget: which[1].toUpperCase() };
        const button = el("button", t("merge.keep_forget", names));
        button.addEventListener("click", function () {
          if (!window.confirm(t("merge.ask", names))) return;
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
        tr.appendChild(el("td", card.gone ? t("merge.forgotten") : cardText(card), card.private ? "private" : ""));
      });
      const td = el("td"); const undo = el("button", t("merge.undo_keep"));
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
    const undo = el("button", t("merge.undo"));
    undo.className = "undo-keep";
    actions.appendChild(el("span", t("merge.kept_both")));
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
    $("questions").hidden = qs.length === 0;
    $("questions-empty").hidden = data.questions === null || qs.length > 0;
    $("salience").hidden = qs.length === 0;
    qs.forEach(function (q) {
      const tr = el("tr");
      [q.text, q.importance, fixed(q.salience), name(q.state)].forEach(function (v) { tr.appendChild(el("td", v)); });
      const td = el("td"); const button = el("button", t("self.resolve"));
      button.addEventListener("click", function () {
        const answer = window.prompt(t("self.resolve.ask"), "");
        if (answer === null) return;
        api("/api/questions/" + encodeURIComponent(q.id) + "/resolve", { method: "POST", body: JSON.stringify({ answer: answer }) })
          .then(loadSelf).catch(function (e) { showError(e.message); });
      });
      td.appendChild(button); tr.appendChild(td); tbody.appendChild(tr);
    });
    $("notions-missing").hidden = data.notions !== null;
    $("notions").hidden = !(data.notions && data.notions.length);
    $("notions-empty").hidden = !(data.notions && !data.notions.length);
    const nbody = $("notions").tBodies[0]; clear(nbody);
    (data.notions || []).forEach(function (n) {
      const tr = el("tr");
      tr.appendChild(el("td", n.label + (n.conviction ? t("self.conviction") : "")));
      const td = el("td"); const bar = el("progress"); bar.max = 1; bar.value = n.confidence;
      td.appendChild(bar); td.appendChild(el("span", " " + fixed(n.confidence))); tr.appendChild(td);
      [name(n.tone), n.person || "", n.reinforced].forEach(function (v) { tr.appendChild(el("td", v)); });
      const actions = el("td");
      const relabel = el("button", t("self.relabel"));
      relabel.addEventListener("click", function () {
        const label = window.prompt(t("self.relabel.ask"), n.label);
        if (!label) return;
        notionAction(n.id, "relabel", { label: label });
      });
      const others = (data.notions || []).filter(function (o) { return o.id !== n.id; });
      const merge = el("button", t("self.merge"));
      merge.disabled = others.length === 0;
      merge.addEventListener("click", function () {
        const menu = others.map(function (o, i) { return (i + 1) + ". " + o.label; }).join("\n");
        const choice = window.prompt(t("self.merge.ask") + "\n" + menu, "");
        const target = others[parseInt(choice, 10) - 1];
        if (target && window.confirm(t("self.merge.confirm", { a: n.label, b: target.label }))) notionAction(n.id, "merge", { into: target.id });
      });
      actions.appendChild(relabel); actions.appendChild(merge); tr.appendChild(actions);
      nbody.appendChild(tr);
    });
    if (!qs.length) dropChart("salience");
    else {
      const days = qs[0].curve.map(function (p) { return t("self.day", { day: p.day }); });
      chart("salience", { type: "line", data: { labels: days, datasets: qs.slice(0, 10).map(function (q) {
        return { label: q.text.slice(0, 30), data: q.curve.map(function (p) { return p.salience; }), pointRadius: 0 };
      }) }, options: { scales: { x: { ticks: TICKS }, y: { min: 0, max: 1 } } } });
    }
    await loadPeople();
  }

  async function loadPeople() {
    const data = await api("/api/people");
    $("people-missing").hidden = data.people !== null;
    $("people").hidden = !(data.people && data.people.length);
    $("people-empty").hidden = !(data.people && !data.people.length);
    const tbody = $("people").tBodies[0]; clear(tbody);
    Object.keys(charts).filter(function (id) { return id.indexOf("trust-") === 0; }).forEach(dropChart);
    (data.people || []).forEach(function (p, i) {
      const tr = el("tr");
      [p.name, name(p.trust_words), fixed(p.trust), p.shared].forEach(function (v) { tr.appendChild(el("td", v)); });
      const cell = el("td");
      if (p.trust_history.length) {
        const canvas = el("canvas", null, "spark"); canvas.id = "trust-" + i; canvas.height = 40; canvas.width = 200;
        cell.appendChild(canvas);
      } else cell.appendChild(el("span", t("self.no_changes"), "missing"));
      tr.appendChild(cell);
      tbody.appendChild(tr);
      if (p.trust_history.length) {
        chart("trust-" + i, { type: "line", data: {
          labels: p.trust_history.map(function (c) { return when(c.at); }),
          datasets: [{ label: t("self.trust"), data: p.trust_history.map(function (c) { return c.trust; }), stepped: true, pointRadius: 2 }],
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
    const format = bucketFormat(data.range);
    const empty = data.first === null;
    $("history-empty").hidden = !empty;
    $("h-emotion-card").hidden = empty;
    $("h-activity-card").hidden = empty;
    const from = empty ? 0 : Math.max(0, Math.min(data.first, data.buckets.length - MIN_BUCKETS));
    const buckets = data.buckets.slice(from);
    const labels = buckets.map(function (b) { return format.format(new Date(b.start)); });
    $("history-span").textContent = t("range." + data.range) + ": " +
      t("history.span", { from: when(buckets.length ? buckets[0].start : data.end), to: when(data.end) });
    if (empty) { dropChart("h-emotion"); dropChart("h-activity"); }
    else {
      chart("h-emotion", { type: "line", data: { labels: labels, datasets: [
        { label: t("field.valence"), data: buckets.map(function (b) { return b.memories ? b.valence : null; }), spanGaps: true, borderColor: "#e07b39", backgroundColor: "#e07b39" },
        { label: t("field.arousal"), data: buckets.map(function (b) { return b.memories ? b.arousal : null; }), spanGaps: true, borderColor: "#6a8caf", backgroundColor: "#6a8caf" },
      ] }, options: { scales: { x: { ticks: TICKS }, y: { min: -1, max: 1 } } } });
      chart("h-activity", { type: "bar", data: { labels: labels, datasets: [
        { label: t("history.memories"), data: buckets.map(function (b) { return b.memories || 0; }), backgroundColor: "#9bb59a" },
        { label: t("history.tool_calls"), data: buckets.map(function (b) { return b.tool_calls; }), backgroundColor: "#6a8caf" },
      ] }, options: { scales: { x: { ticks: TICKS }, y: { beginAtZero: true, ticks: { precision: 0 } } } } });
    }
    await loadDesireHistory(data.range);
    const tbody = $("h-tools").tBodies[0]; clear(tbody);
    const tools = Object.entries(data.tools).sort(function (a, b) { return b[1] - a[1]; });
    $("h-tools").hidden = tools.length === 0;
    $("h-tools-empty").hidden = tools.length > 0;
    tools.forEach(function (x) {
      const tr = el("tr"); tr.appendChild(el("td", x[0])); tr.appendChild(el("td", x[1])); tbody.appendChild(tr);
    });
  }

  async function loadDesireHistory(range) {
    const data = await api("/api/history/desires?range=" + encodeURIComponent(range));
    const format = bucketFormat(range);
    $("h-desires-missing").hidden = data.desires;
    const empty = !data.desires || data.samples.length === 0;
    $("h-desires").hidden = empty;
    $("h-desires-empty").hidden = !(data.desires && data.samples.length === 0);
    $("h-desires-count").textContent = data.desires && !empty ? t("history.samples", { samples: data.samples.length, names: data.names.length }) : "";
    if (empty) { dropChart("h-desires"); return; }
    chart("h-desires", { type: "line", data: {
      labels: data.samples.map(function (s) { return format.format(new Date(s.at)); }),
      datasets: data.names.map(function (desire) {
        return { label: name(desire), data: data.samples.map(function (s) { return desire in s.levels ? s.levels[desire] : null; }), spanGaps: true, pointRadius: 2 };
      }),
    }, options: { scales: { x: { ticks: TICKS }, y: { min: 0, max: 1 } } } });
  }

  // ---- Logs
  const LOG_FIRST = ["tool", "outcome", "duration_ms", "agent", "message"];
  const LOG_QUIET = { logger: true, msg: true, pid: true };
  function logSummary(event, rest) { // one line: the fields that say most; every field is in the fold
    const keys = LOG_FIRST.filter(function (k) { return k in rest; }).concat(Object.keys(rest).filter(function (k) {
      return LOG_FIRST.indexOf(k) < 0 && !LOG_QUIET[k];
    })).slice(0, 5);
    const parts = keys.map(function (k) {
      const v = rest[k];
      const text = typeof v === "object" && v !== null ? JSON.stringify(v) : String(v);
      return k === "duration_ms" ? text + " ms" : k === "message" ? text : k + "=" + text;
    });
    if (!parts.length && rest.msg && rest.msg !== event) parts.push(String(rest.msg));
    const line = parts.join(" · ");
    return line.length > 160 ? line.slice(0, 159) + "…" : line;
  }

  async function loadLogs() {
    const p = new URLSearchParams({ limit: "200" });
    const filtered = $("log-level").value || $("log-q").value.trim();
    if ($("log-level").value) p.set("level", $("log-level").value);
    if ($("log-q").value.trim()) p.set("q", $("log-q").value.trim());
    const data = await api("/api/logs?" + p.toString());
    const tbody = $("logs").tBodies[0];
    const open = {}; // rows the owner unfolded stay unfolded when the live view refreshes
    tbody.querySelectorAll("details[open]").forEach(function (d) { open[d.dataset.key] = true; });
    clear(tbody);
    $("logs").hidden = data.rows.length === 0;
    $("logs-empty").hidden = data.rows.length > 0;
    $("logs-empty").textContent = filtered ? t("logs.nomatch") : t("logs.empty", { dir: data.log_dir });
    data.rows.slice().reverse().forEach(function (r) {
      const rest = Object.assign({}, r); delete rest.ts; delete rest.level; delete rest.event;
      const tr = el("tr", undefined, "log-row");
      tr.appendChild(el("td", when(r.ts), "log-time"));
      const level = el("td"); level.appendChild(el("span", name(r.level || "info"), "level level-" + (r.level || "info"))); tr.appendChild(level);
      tr.appendChild(el("td", r.event || r.logger || "", "log-event"));
      const cell = el("td", undefined, "log-details");
      const keys = Object.keys(rest);
      if (keys.length) {
        const fold = el("details");
        fold.dataset.key = [r.ts, r.event, r.msg, r.pid].join("|");
        fold.open = open[fold.dataset.key] === true;
        fold.appendChild(el("summary", logSummary(r.event, rest) || keys.join(", ")));
        const table = el("table", undefined, "log-fields");
        keys.forEach(function (k) {
          const row = el("tr"); row.appendChild(el("th", k));
          const v = rest[k];
          row.appendChild(el("td", typeof v === "object" && v !== null ? JSON.stringify(v, null, 1) : String(v)));
          table.appendChild(row);
        });
        fold.appendChild(table);
        cell.appendChild(fold);
      }
      tr.appendChild(cell);
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

  function sharedStatus(text, setup) {
    const status = $("shared-status"); clear(status);
    status.appendChild(document.createTextNode(text));
    $("shared-setup").hidden = !setup;
    if (setup) {
      const link = el("a", t("shared.setup.link"), "setup-link");
      link.href = "#shared-setup";
      status.appendChild(document.createTextNode(" "));
      status.appendChild(link);
    }
  }

  async function loadShared() {
    const query = sharedScopes ? "?scopes=" + encodeURIComponent(sharedScopes) : "";
    const data = await api("/api/shared" + query);
    $("shared-body").hidden = !(data.configured && data.reachable);
    if (!data.enabled) { sharedStatus(t("shared.off"), true); return; }
    if (!data.configured) { sharedStatus(t("shared.unset"), true); return; }
    if (!data.reachable) { sharedStatus(t("shared.unreachable", { where: data.where, error: data.error }), false); return; }
    sharedStatus(t("shared.read", { agent: data.agent_id, where: data.where, stamp: data.ruleset_stamp,
      scopes: data.scopes.join(", "), snapshot: data.snapshot_id }), false);
    $("shared-pins").textContent = data.pinned_md || t("shared.no_pins");
    const entries = $("shared-entries"); clear(entries);
    Object.keys(data.entries).forEach(function (scope) {
      const tr = el("tr"); tr.appendChild(el("th", scope)); tr.appendChild(el("td", data.entries[scope])); entries.appendChild(tr);
    });
    $("shared-conflict-count").textContent = t("shared.conflicts_count", { count: data.open_conflicts });
    const events = $("shared-events"); clear(events);
    Object.keys(data.events_by_scope).forEach(function (scope) {
      const box = el("div", undefined, "scope-events");
      box.dataset.scope = scope;
      box.appendChild(el("h3", scope));
      const table = el("table", undefined, "rows");
      const head = el("thead");
      const heads = el("tr");
      ["shared.when", "shared.by", "shared.kind", "shared.key", "shared.text"].forEach(function (k) { heads.appendChild(el("th", t(k))); });
      head.appendChild(heads); table.appendChild(head);
      const body = el("tbody");
      const list = data.events_by_scope[scope];
      if (!list.length) body.appendChild(row(["", "", "", "", t("shared.no_events")]));
      list.forEach(function (e) {
        const flags = (data.pinned_event_ids.indexOf(e.event_id) >= 0 ? t("flag.pinned") : "") + (e.redacted ? t("flag.redacted") : "") +
          (e.expired ? t("flag.expired") : "");
        const tr = row([when(e.created_at), e.agent_id, e.kind, e.dedupe_key, e.content_md + flags]);
        tr.dataset.event = e.event_id;
        body.appendChild(tr);
      });
      table.appendChild(body); box.appendChild(table); events.appendChild(box);
    });
    const operatorMissing = $("shared-operator-missing");
    $("shared-operator").hidden = !data.operator || Boolean(data.operator_error);
    operatorMissing.hidden = data.operator && !data.operator_error;
    operatorMissing.textContent = data.operator_error ? t("shared.operator_error", { error: data.operator_error }) :
      data.mode === "gateway" ? t("shared.operator_gateway") : t("shared.operator_local");
    if (!data.operator || data.operator_error) return;
    const conflicts = $("shared-conflicts").tBodies[0]; clear(conflicts);
    if (!data.conflicts.length) conflicts.appendChild(row([t("shared.no_conflicts")]));
    data.conflicts.forEach(function (c) {
      conflicts.appendChild(row([c.scope, c.dedupe_key, c.event_id, c.previous_event_id, when(c.detected_at), c.asked_in || t("shared.not_asked")]));
    });
    const audit = $("shared-audit").tBodies[0]; clear(audit);
    data.audit.forEach(function (a) { audit.appendChild(row([when(a.at), a.actor, a.action, a.event_id, a.detail])); });
  }

  function showPlan(plan) {
    shownPlan = plan;
    $("cleanup-plan").hidden = false;
    $("cleanup-done").textContent = "";
    const counts = Object.keys(plan.counts).map(function (k) { return k + ": " + plan.counts[k]; }).join(t("fmt.list")) || t("cleanup.nothing");
    $("cleanup-plan-summary").textContent = t("cleanup.summary", { plan: plan.plan_id, state: name(plan.state), by: plan.proposed_by,
      total: plan.total, counts: counts, more: plan.truncated ? t("cleanup.more") : "",
      until: plan.state === "open" ? t("cleanup.until", { when: when(plan.expires_at) }) : "" });
    const tbody = $("cleanup-events").tBodies[0]; clear(tbody);
    plan.events.forEach(function (e) {
      tbody.appendChild(row([e.event_id || "", e.scope || (e.gone ? t("cleanup.gone") : ""), e.kind, e.dedupe_key, e.content_md]));
    });
    if (plan.total > plan.events.length) tbody.appendChild(row([t("cleanup.and_more", { count: plan.total - plan.events.length })]));
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
    if (!shownPlan || !window.confirm(t("cleanup.ask", { total: shownPlan.total, plan: shownPlan.plan_id }))) return;
    const done = await api("/api/shared/cleanup/" + encodeURIComponent(shownPlan.plan_id) + "/confirm", { method: "POST", body: "{}" });
    $("cleanup-confirm").hidden = true;
    $("cleanup-done").textContent = t("cleanup.done", { deleted: done.deleted,
      gone: done.already_gone ? t("cleanup.done.gone", { gone: done.already_gone }) : "" });
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
  $("lang").addEventListener("change", function () {
    try { window.localStorage.setItem(LANG_KEY, $("lang").value); } catch (e) { /* a private window: this page only */ }
    const params = new URLSearchParams(window.location.search);
    if (params.has("lang")) { // the switch now decides: drop ?lang= so a reload keeps the choice
      params.delete("lang");
      const rest = params.toString();
      window.history.replaceState(null, "", window.location.pathname + (rest ? "?" + rest : ""));
    }
    setLanguage($("lang").value);
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
    if ($("live").checked && current !== "memory" && !document.hidden && $("login-form").hidden) loaders[current]().catch(function (e) { showError(e.message); });
  }, 5000);
  function begin() {
    $("login-form").hidden = true;
    api("/api/status").then(function (status) {
      revealAllowed = status.reveal_private === true;
      configured = status.language;
      zone = status.timezone || "UTC";
      $("f-private-text-box").hidden = !revealAllowed;
      $("logout").hidden = false;
      loggedIn = true;
      setLanguage(chosenLanguage());
    }).catch(function (e) { showError(e.message); });
  }
  async function login(body) {
    await api("/api/login", { method: "POST", body: JSON.stringify(body) });
    begin();
  }
  $("login-form").addEventListener("submit", function (e) {
    e.preventDefault();
    const given = $("owner-token").value.trim();
    $("owner-token").value = "";
    login({ owner_token: given }).catch(function (x) { showError(x.message); $("login-form").hidden = false; });
  });
  $("logout").addEventListener("click", function () {
    api("/api/logout", { method: "POST", body: "{}" }).then(function () { window.location.reload(); })
      .catch(function (x) { showError(x.message); });
  });
  lang = chosenLanguage();
  translatePage();
  const link = new URLSearchParams(window.location.hash.slice(1)).get("login");
  if (link) {
    window.history.replaceState(null, "", window.location.pathname + window.location.search); // out of sight and history
    login({ login: link }).catch(function (x) { showError(x.message); $("login-form").hidden = false; });
  } else begin();
})();
