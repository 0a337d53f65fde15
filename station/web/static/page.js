// The technicians' page and the dealer's view, live: server-sent events replace the sections the server renders,
// and the diagnostic button posts without leaving the page. No build step, no library.
"use strict";
(function () {
  const live = document.getElementById("live");
  const csrf = document.querySelector('meta[name="csrf-token"]');
  const shown = new Map();
  // The script's words, in the page's language: the template writes them on <main>.
  const words = (document.getElementById("main") || document.body).dataset;

  function say(text) {
    if (live) live.textContent = text;
  }

  if (window.EventSource) {
    // the sections of this view alone (the technicians' page or the dealer's view)
    const source = new EventSource("/events?view=" + encodeURIComponent(words.view || "page"));
    source.addEventListener("page", function (message) {
      const data = JSON.parse(message.data);
      for (const [name, html] of Object.entries(data.sections)) {
        const element = document.querySelector('[data-section="' + name + '"]');
        if (element && shown.get(name) !== html) {
          element.innerHTML = html;
          shown.set(name, html);
        }
      }
      settled();
      say(words.live + " " + new Date().toLocaleTimeString(document.documentElement.lang));
    });
    source.addEventListener("logout", function () {
      source.close();
      window.location.assign("/login");
    });
    source.addEventListener("error", function () {
      say(words.lost);
    });
  }

  // The dealer's view: a touch button or the dice, sent without leaving the view; the
  // table's answer in words. Forms are found at each submit: the dice form comes and goes
  // with the live sections. A refusal stays until the next press; the answer to a press
  // taken goes once the table, moved on since the press (seen working, or its "next" line
  // changed: a quick step may be over before the view shows it working), no longer works:
  // the view's "next" line then says what to press.
  const answer = document.getElementById("answer");
  let worked = false;
  let nextAtPress = "";
  function settled() {
    const next = document.getElementById("next");
    if (!answer || !next) return;
    if (next.dataset.working === "yes") {
      worked = true;
    } else if ((worked || next.textContent !== nextAtPress) && answer.classList.contains("ok")) {
      answer.textContent = "";
      answer.className = "answer";
    }
  }
  document.addEventListener("submit", async function (event) {
    const act = event.target;
    if (!(act instanceof HTMLFormElement) || !act.classList.contains("act") || !csrf) return;
    event.preventDefault();
    const button = act.querySelector("button");
    if (button) button.disabled = true;
    worked = false;
    const next = document.getElementById("next");
    nextAtPress = next ? next.textContent : "";
    try {
      // getAttribute: the form's field "action" hides the form's action property
      const response = await fetch(act.getAttribute("action"), {
        method: "POST",
        body: new URLSearchParams(new FormData(act)),
        headers: { "X-CSRF-Token": csrf.content, "Accept": "application/json" },
        credentials: "same-origin",
      });
      if (response.status === 401) {
        window.location.assign("/login");
        return;
      }
      const data = response.ok ? await response.json() : { accepted: false, message: await response.text() };
      if (answer) {
        answer.textContent = data.message;
        answer.className = "answer " + (data.accepted ? "ok" : "bad");
        settled();
      }
    } catch (error) {
      if (answer) answer.textContent = words.unreachable + " " + error;
    } finally {
      if (button) button.disabled = false;
    }
  });

  const form = document.getElementById("diag-form");
  const result = document.getElementById("diag-result");
  if (form && result && csrf) {
    form.addEventListener("submit", async function (event) {
      event.preventDefault();
      const button = form.querySelector("button");
      button.disabled = true;
      result.textContent = words.running;
      try {
        const response = await fetch("/diag", {
          method: "POST",
          body: new FormData(form),
          headers: { "X-CSRF-Token": csrf.content, "Accept": "application/json" },
          credentials: "same-origin",
        });
        if (response.status === 401) {
          window.location.assign("/login");
          return;
        }
        const data = await response.json();
        result.innerHTML = data.html;
      } catch (error) {
        result.textContent = words.failed + " " + error;
      } finally {
        button.disabled = false;
      }
    });
  }
})();
