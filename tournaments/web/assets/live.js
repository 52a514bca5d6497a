/* The live view (tournaments/web/live_view.py): the referee's public spectator events (their
   fields, and which families send each: docs/records.md, "What the views read") and the
   tournament's standings, pushed from /events as server-sent events and drawn as they come.
   No library and no network but this page's own origin. */
"use strict";
(function () {
  // What a table keeps, as live_view.py keeps it.
  const KEEP_DEALS = 12;
  const KEEP_RESULTS = 200;

  const view = {
    page: null,
    tables: new Map(),
    standings: null,
    progress: null,
    problem: null,
    feed: { state: "connecting", problem: null },
    over: null,
    connected: false,
    follow: null,
    ignored: 0,
    opened: new Map(),
  };
  const dirty = { status: true, standings: true, tables: true, follow: true };

  // -- small helpers ------------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else node.setAttribute(key, String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function card(code) {
    return el("span", { class: "card suit-" + code.slice(-1), "data-card": code }, code);
  }

  function cardList(codes) {
    const out = [];
    codes.forEach((code, i) => {
      if (i) out.push(" ");
      out.push(card(code));
    });
    return out;
  }

  // Scores as people write them, "7-4"; with a negative one, "-2 / +4 / -2" (as tavolo watch).
  function dash(values) {
    if (values.every((v) => v >= 0)) return values.join("-");
    return values.map((v) => (v >= 0 ? "+" + v : String(v))).join(" / ");
  }

  function words(text) {
    return String(text).replace(/_/g, " ");
  }

  function duration(seconds) {
    if (seconds < 60) return seconds + " s";
    const minutes = Math.floor(seconds / 60);
    if (minutes < 60) return minutes + " min " + (seconds % 60) + " s";
    return Math.floor(minutes / 60) + " h " + (minutes % 60) + " min";
  }

  function fixed(value, digits) {
    return value === null || value === undefined ? "–" : value.toFixed(digits);
  }

  // -- the state, changed as live_view.py changes its own ------------------------------

  function applyEvent(table, event) {
    if (event.type === "game_over") {
      table.results.push(event);
      if (table.results.length > KEEP_RESULTS) table.results.shift();
      table.previous = { game: event.game, events: table.events, over: event };
      table.events = [];
      table.dropped = 0;
      table.game = Math.max(table.game, event.game + 1);
      return;
    }
    table.game = Math.max(table.game, 1);
    table.events.push(event);
    if (event.type === "deal_scored") {
      const scored = [];
      table.events.forEach((e, i) => {
        if (e.type === "deal_scored") scored.push(i);
      });
      if (scored.length > KEEP_DEALS) {
        table.events.splice(0, scored[0] + 1);
        table.dropped += 1;
      }
    }
  }

  function touch(id) {
    dirty.tables = true;
    if (id === view.follow) dirty.follow = true;
  }

  function applyOp(op) {
    const table = op.id === undefined ? null : view.tables.get(op.id);
    switch (op.op) {
      case "table":
        view.tables.set(op.table.id, op.table);
        touch(op.table.id);
        break;
      case "meta":
        if (table) Object.assign(table, { game: op.game, done: op.done, note: op.note, entries: op.entries });
        touch(op.id);
        break;
      case "event":
        if (table) applyEvent(table, op.event);
        touch(op.id);
        break;
      case "drop":
        view.tables.delete(op.id);
        touch(op.id);
        break;
      case "feed":
        view.feed = op.feed;
        dirty.status = true;
        break;
      case "standings":
        view.standings = op.standings;
        view.progress = op.progress;
        view.problem = op.problem;
        dirty.standings = true;
        break;
      case "ignored":
        view.ignored = op.count;
        dirty.status = true;
        break;
      default:
        throw new Error("unknown change from the live view: " + op.op);
    }
  }

  function load(snapshot) {
    view.page = snapshot.page;
    view.tables = new Map(snapshot.tables.map((t) => [t.id, t]));
    view.standings = snapshot.standings;
    view.progress = snapshot.progress;
    view.problem = snapshot.problem;
    view.feed = snapshot.feed;
    view.over = snapshot.over;
    view.ignored = snapshot.ignored;
    for (const key of Object.keys(dirty)) dirty[key] = true;
  }

  // -- reading a table's events -------------------------------------------------------

  // The deals of a game's events: those scored, and the one in progress (maybe empty).
  function splitDeals(events) {
    const scored = [];
    let current = { events: [], scored: null };
    for (const event of events) {
      if (event.type === "deal_scored") {
        current.scored = event;
        current.number = event.deal;
        scored.push(current);
        current = { events: [], scored: null };
      } else {
        current.events.push(event);
      }
    }
    current.number = scored.length ? scored[scored.length - 1].number + 1 : 1;
    return { scored: scored, current: current };
  }

  // A deal's events in order: what came before the first card, then trick by trick.
  function structure(events) {
    const out = { before: [], tricks: [], open: { plays: [], notes: [] } };
    for (const event of events) {
      const open = out.open;
      switch (event.type) {
        case "card_played":
          open.plays.push(event);
          break;
        case "trick_won":
          open.number = event.trick;
          open.winner = event.winner;
          out.tricks.push(open);
          out.open = { plays: [], notes: [] };
          break;
        case "card_drawn": // after a trick: the winner draws first
          if (out.tricks.length && !open.plays.length) out.tricks[out.tricks.length - 1].notes.push(event);
          else open.notes.push(event);
          break;
        case "bid_made":
        case "card_called":
        case "monte_split":
          out.before.push(event);
          break;
        default: // declared, declarations_ended, called_out
          if (!out.tricks.length && !open.plays.length) out.before.push(event);
          else open.notes.push(event);
      }
    }
    return out;
  }

  // Seats and sides, once a deal of the table has been scored (the spectator stream names
  // no game); null before.
  function sidesOf(table) {
    const all = table.events.concat(table.previous ? table.previous.events : []);
    const scored = all.find((e) => e.type === "deal_scored" && e.hands.length);
    return scored ? scored.points.length : null;
  }

  function seat(number, sides) {
    return el("span", { class: sides ? "seat side-" + (number % sides) : "seat" }, "seat " + number);
  }

  function resultText(over) {
    const who = over.winner < 0 ? "a draw" : "side " + over.winner + " won";
    const fault = over.forfeit_seat >= 0 ? ", seat " + over.forfeit_seat + " forfeited" : "";
    return dash(over.totals) + ", " + who + " (" + words(over.termination) + fault + ")";
  }

  function scoreText(s) {
    if (s.contract) {
      const made = s.success ? "made it" : "failed";
      const cappotto = s.cappotto >= 0 ? ", cappotto" : "";
      return s.contract + " by seat " + s.soloist + ", " + made + cappotto +
        "; payouts " + dash(s.points) + ", totals " + dash(s.totals);
    }
    if (s.soloist < 0) return "everyone passed: the same dealer deals again";
    if (!s.thirds.length) { // Briscola counts whole card points, and a deal won scores 1
      const won = s.points.findIndex((p) => p > 0);
      return "cards " + dash(s.card_points) + " of 120, " + (won < 0 ? "a draw" : "side " + won + " wins the deal") +
        "; deals won " + dash(s.totals);
    }
    const cappotto = s.cappotto >= 0 ? ", cappotto by side " + s.cappotto : "";
    return "points " + dash(s.points) + " (cards " + dash(s.card_points) + ", declarations " +
      dash(s.declarations) + ", last trick seat " + s.last_trick + cappotto + "), totals " +
      dash(s.totals);
  }

  function note(event, sides) {
    switch (event.type) {
      case "bid_made":
        return [seat(event.seat, sides), " bids " + event.bid];
      case "card_called":
        return [seat(event.seat, sides), " calls ", card(event.card),
          event.holder < 0 ? " (in the monte)" : " (held by seat " + event.holder + ")"];
      case "monte_split":
        return [seat(event.seat, sides), " takes ", event.take.length ? cardList(event.take) : "nothing",
          " from the monte"];
      case "declared":
        return [seat(event.seat, sides), " declares " + event.declaration + " ", cardList(event.cards),
          ": " + event.points + " points"];
      case "declarations_ended":
        return [seat(event.seat, sides), " has nothing more to declare"];
      case "called_out":
        return [seat(event.seat, sides), " calls out with " + event.claimed + " points claimed: " +
          (event.correct ? "right" : "wrong")];
      case "card_drawn":
        return [seat(event.seat, sides), " draws ", card(event.card)];
      default:
        return [words(event.type)];
    }
  }

  function plays(list, sides) {
    // A space between plays, so that a long trick wraps between them.
    return list.map((p, i) => [i ? " " : null,
      el("span", { class: "play" }, seat(p.seat, sides), " ", card(p.card),
        p.signal ? el("span", { class: "signal" }, " " + p.signal) : null)]);
  }

  // One deal: state "playing" (in progress), "scored", or "cut" (its game ended first).
  function dealBox(deal, game, state, sides, open) {
    const parts = structure(deal.events);
    const played = deal.events.filter((e) => e.type === "card_played").length;
    const attrs = { class: "deal deal-" + state, "data-game": game, "data-deal": deal.number, "data-state": state };
    let head;
    if (state === "playing") {
      head = el("h3", null, "Deal " + deal.number + " · " +
        (played ? "in progress · " + played + " cards played" : "waiting for its first card"));
    } else if (state === "scored") {
      head = el("summary", null, el("strong", null, "Deal " + deal.number), ": " + scoreText(deal.scored));
    } else {
      head = el("summary", null, el("strong", null, "Deal " + deal.number), ": cut short when the game ended");
    }
    const body = [];
    if (parts.before.length) {
      body.push(el("ul", { class: "notes" }, parts.before.map((e) => el("li", null, note(e, sides)))));
    }
    const rows = parts.tricks.map((t) =>
      el("li", { class: "trick", value: t.number },
        el("span", { class: "plays" }, plays(t.plays, sides)),
        el("span", { class: "winner" }, " → ", seat(t.winner, sides)),
        t.notes.map((n) => el("div", { class: "trick-note" }, note(n, sides)))));
    const open_ = parts.open;
    if (open_.plays.length || open_.notes.length) {
      rows.push(el("li", { class: "trick trick-open", value: parts.tricks.length + 1 },
        el("span", { class: "plays" }, plays(open_.plays, sides)),
        state === "playing" ? el("span", { class: "winner muted" }, " …") : null,
        open_.notes.map((n) => el("div", { class: "trick-note" }, note(n, sides)))));
    }
    if (rows.length) body.push(el("ol", { class: "tricks" }, rows));
    if (deal.scored) {
      const s = deal.scored;
      body.push(el("table", { class: "hands" }, el("tbody", null,
        s.hands.map((hand, i) => el("tr", { class: "hand", "data-seat": i },
          el("th", null, seat(i, sides)), el("td", null, cardList(hand)))),
        s.set_aside.length ? el("tr", { class: "set-aside" },
          el("th", null, "set aside"), el("td", null, cardList(s.set_aside))) : null)));
    }
    if (state === "playing") return el("div", attrs, head, body);
    // A deal the reader opened or closed stays so as the page is drawn again.
    const key = game + "/" + deal.number;
    const shown = view.opened.has(key) ? view.opened.get(key) : open;
    return el("details", Object.assign(attrs, { open: shown ? "" : null, "data-key": key }), head, body);
  }

  // -- drawing ------------------------------------------------------------------------

  function renderStatus() {
    const box = document.getElementById("status");
    let text;
    let kind = "ok";
    if (view.over) {
      text = view.over + ": this page shows where it stopped.";
      kind = "over";
    } else if (!view.page) {
      text = "connecting to the live view…";
      kind = "warn";
    } else if (!view.connected) {
      text = "the live view cannot be reached: trying again…";
      kind = "warn";
    } else if (view.feed.state === "live") {
      text = "live: following the referee's tables.";
    } else if (view.feed.state === "connecting") {
      text = "waiting for the referee…";
      kind = "warn";
    } else {
      text = "the referee cannot be reached (" + view.feed.problem + "): trying again…";
      kind = "warn";
    }
    if (view.page && !view.page.public_names) text += " Entry names are not public at this referee.";
    if (view.ignored) text += " " + view.ignored + " events of kinds this page does not know were left out.";
    box.textContent = text;
    box.dataset.kind = kind;
  }

  function renderProgress() {
    const box = document.getElementById("progress");
    const p = view.progress;
    if (!box || !p) return;
    const eta = p.eta_seconds === null ? "" : ", about " + duration(p.eta_seconds) + " left";
    // In rank order, with the Elo that ranks them (and the score, which may not agree).
    const leaders = p.leaders.map((l, i) => [
      i ? ", " : "", el("strong", null, l.name),
      " " + Math.round(l.elo) + " Elo (" + l.score_percent.toFixed(0) + "% score)",
    ]);
    const parts = [
      el("p", { class: "live-count", "data-done": p.done, "data-total": p.total }, p.done + " of " + p.total + " games" + eta),
      el("progress", { max: Math.max(p.total, 1), value: p.done }, p.done + " of " + p.total),
    ];
    if (leaders.length) parts.push(el("p", { class: "leaders" }, "Leading: ", leaders));
    box.replaceChildren(...parts);
  }

  function renderStandings() {
    renderProgress();
    const box = document.getElementById("standings");
    const s = view.standings;
    if (!box) return;
    const problem = view.problem ? el("p", { class: "live-warn" }, view.problem) : null;
    if (!s || !s.games) {
      box.replaceChildren(problem || el("p", { class: "muted" }, "no game has finished yet"));
      return;
    }
    const head = el("tr", null, ["#", "entry", "Elo", "-/+95%", "games", "W-D-L", "score", "pts/deal", "faults"]
      .map((h) => el("th", { class: h === "entry" ? "name" : null, scope: "col" }, h)));
    const rows = s.entries.map((e) => {
      const faults = e.timeouts + e.illegal + e.crashes;
      return el("tr", { "data-entry": e.name },
        el("td", { class: "rank" }, e.rank === null ? "–" : e.rank),
        el("td", { class: "name" }, e.name),
        el("td", { class: "elo" }, fixed(e.elo, 0)),
        el("td", { class: "ci", title: e.ci_low === null ? null : fixed(e.ci_low, 0) + " to " + fixed(e.ci_high, 0) },
          e.ci_low === null || e.elo === null ? "–" : "-" + fixed(e.elo - e.ci_low, 0) + "/+" + fixed(e.ci_high - e.elo, 0)),
        el("td", { class: "games" }, e.games),
        el("td", { class: "wdl" }, e.wins + "-" + e.draws + "-" + e.losses),
        el("td", { class: "score" }, fixed(e.score_percent, 1) + "%"),
        el("td", { class: "ppd" }, fixed(e.points_per_deal, 2)),
        el("td", { class: "faults", title: "timeouts, illegal actions, crashes" },
          faults ? e.timeouts + "/" + e.illegal + "/" + e.crashes : "–"));
    });
    box.replaceChildren(...(problem ? [problem] : []),
      el("table", { class: "data live-standings" }, el("thead", null, head), el("tbody", null, rows)),
      el("p", { class: "note" }, s.games + " games rated (" + s.ratings.model + ", 95% intervals from " +
        s.ratings.bootstrap + " bootstrap resamples)."));
  }

  function entriesText(table) {
    return table.entries.length ? table.entries.join(" vs ") : "names not public";
  }

  function tile(table) {
    const { scored, current } = splitDeals(table.events);
    const played = current.events.filter((e) => e.type === "card_played").length;
    const last = scored.length ? scored[scored.length - 1].scored : null;
    const state = table.done ? "over" : table.game === 0 ? "waiting" : "playing";
    let where;
    if (table.done) where = "over: " + table.results.length + " games played" + (table.note ? "; " + table.note : "");
    else if (table.game === 0) where = "waiting for the bots";
    else where = "game " + table.game + " · deal " + current.number + " · " + played + " cards played";
    const results = table.results.slice(-4).map((r) =>
      el("li", null, "game " + r.game + ": " + resultText(r)));
    return el("button", {
      type: "button", class: "table-tile", "data-id": table.id, "data-state": state,
      "data-entries": table.entries.join(","), "aria-pressed": table.id === view.follow ? "true" : "false",
    },
    el("span", { class: "tile-head" }, el("strong", null, "table " + table.id.slice(0, 8)), " ",
      el("span", { class: "tile-state" }, state)),
    el("span", { class: "tile-entries" }, entriesText(table)),
    el("span", { class: "tile-where" }, where),
    last && !table.done ? el("span", { class: "tile-score" }, "score " + dash(last.totals)) : null,
    results.length ? el("ul", { class: "tile-results" }, results) : null);
  }

  function renderTables() {
    const box = document.getElementById("tables");
    const tables = Array.from(view.tables.values());
    // Tables being played first, then the finished ones, newest first.
    tables.sort((a, b) => Number(a.done) - Number(b.done));
    box.replaceChildren(tables.length ? el("div", { class: "tiles" }, tables.map(tile)) :
      el("p", { class: "muted" }, "no table is being played"));
  }

  function renderFollow() {
    const box = document.getElementById("follow");
    const table = view.follow === null ? null : view.tables.get(view.follow);
    if (!table) {
      for (const key of ["table", "entries", "game"]) delete box.dataset[key];
      box.replaceChildren(el("h2", { id: "follow-title" }, "Following"),
        el("p", { class: "muted" }, view.follow === null ? "no table chosen" : "table " + view.follow + " is no longer kept"));
      return;
    }
    const between = !table.events.length && table.previous;
    const game = between ? table.previous.game : table.game;
    const events = between ? table.previous.events : table.events;
    const { scored, current } = splitDeals(events);
    const sides = sidesOf(table);
    box.dataset.table = table.id;
    box.dataset.entries = table.entries.join(",");
    box.dataset.game = game;
    let line;
    if (table.game === 0) line = "waiting for the match to start";
    else if (between) line = "game " + game + " is over: " + resultText(table.previous.over) +
      (table.done ? ". The match is over." : ". The next game starts soon.");
    else line = "game " + game;
    const parts = [
      el("h2", { id: "follow-title" }, "Table " + table.id),
      el("p", { class: "follow-entries" }, entriesText(table)),
      el("p", { class: "follow-game" }, line),
    ];
    if (table.game !== 0 && !between && !table.done) parts.push(dealBox(current, game, "playing", sides, false));
    if (between && current.events.length) parts.push(dealBox(current, game, "cut", sides, true));
    scored.slice().reverse().forEach((deal, i) => parts.push(dealBox(deal, game, "scored", sides, i === 0)));
    const dropped = between ? 0 : table.dropped;
    if (dropped) parts.push(el("p", { class: "note" }, "The first " + dropped + " deals of this game are no longer kept."));
    if (table.results.length) {
      parts.push(el("h3", null, "Games played"),
        el("ol", { class: "results" }, table.results.map((r) => el("li", { value: r.game }, resultText(r)))));
    }
    if (table.note) parts.push(el("p", { class: "live-warn" }, table.note));
    box.replaceChildren(...parts);
  }

  function render() {
    if (dirty.status) renderStatus();
    if (dirty.standings) renderStandings();
    if (dirty.tables) renderTables();
    if (dirty.follow) renderFollow();
    for (const key of Object.keys(dirty)) dirty[key] = false;
  }

  // -- wiring -------------------------------------------------------------------------

  function choose(id) {
    if (id !== view.follow) view.opened.clear();
    view.follow = id;
    history.replaceState(null, "", "#table=" + encodeURIComponent(id));
    dirty.tables = dirty.follow = true;
    render();
  }

  function connect() {
    const source = new EventSource("events");
    source.addEventListener("snapshot", (e) => {
      load(JSON.parse(e.data));
      view.connected = true;
      render();
    });
    source.addEventListener("update", (e) => {
      for (const op of JSON.parse(e.data).ops) applyOp(op);
      render();
    });
    source.addEventListener("over", (e) => {
      view.over = JSON.parse(e.data).why || "the live view has stopped";
      source.close();
      dirty.status = true;
      render();
    });
    source.addEventListener("error", () => {
      if (view.over) return;
      view.connected = false;
      dirty.status = true;
      render();
    });
  }

  // Only the reader's own clicks are remembered, not the opening of the newest deal.
  document.getElementById("follow").addEventListener("click", (e) => {
    const summary = e.target instanceof Element ? e.target.closest("summary") : null;
    const details = summary ? summary.parentElement : null;
    if (details instanceof HTMLDetailsElement && details.dataset.key) view.opened.set(details.dataset.key, !details.open);
  });
  const chosen = /^#table=(.+)$/.exec(location.hash);
  if (chosen) view.follow = decodeURIComponent(chosen[1]);
  document.getElementById("tables").addEventListener("click", (e) => {
    const target = e.target instanceof Element ? e.target.closest(".table-tile") : null;
    if (target) choose(target.getAttribute("data-id"));
  });
  // What the page was served with: shown at once, before the event stream connects.
  const served = document.getElementById("snapshot");
  if (served) {
    if (served.textContent) load(JSON.parse(served.textContent));
    served.remove(); // read once; the page holds no second copy of the tables
  }
  render();
  connect();
})();
