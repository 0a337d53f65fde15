// The technicians' page, live: server-sent events replace the sections the server renders,
// and the diagnostic button posts without leaving the page. No build step, no library.
"use strict";
(function () {
  const live = document.getElementById("live");
  const csrf = document.querySelector('meta[name="csrf-token"]');
  const shown = new Map();

  function say(text) {
    if (live) live.textContent = text;
  }

  if (window.EventSource) {
    const source = new EventSource("/events");
    source.addEventListener("page", function (message) {
      const data = JSON.parse(message.data);
      for (const [name, html] of Object.entries(data.sections)) {
        const element = document.querySelector('[data-section="' + name + '"]');
        if (element && shown.get(name) !== html) {
          element.innerHTML = html;
          shown.set(name, html);
        }
      }
      say("live, updated " + new Date().toLocaleTimeString());
    });
    source.addEventListener("logout", function () {
      source.close();
      window.location.assign("/login");
    });
    source.addEventListener("error", function () {
      say("connection to the table's page lost; trying again…");
    });
  }

  const form = document.getElementById("diag-form");
  const result = document.getElementById("diag-result");
  if (form && result && csrf) {
    form.addEventListener("submit", async function (event) {
      event.preventDefault();
      const button = form.querySelector("button");
      button.disabled = true;
      result.textContent = "Running the checks…";
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
        result.textContent = "The checks could not run: " + error;
      } finally {
        button.disabled = false;
      }
    });
  }
})();
