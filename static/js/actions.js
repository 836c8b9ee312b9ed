// The bulk action form: show each field the actions ask for (a move's target queue) only when
// the chosen action asks for it (data-shown-for-action lists them, space-separated). Without
// this script every field is simply shown (and ignored by the actions that do not ask for it).
(function () {
  "use strict";

  function sync(select) {
    var form = select.form;
    if (!form) return;
    form.querySelectorAll("[data-shown-for-action]").forEach(function (field) {
      field.hidden = field.getAttribute("data-shown-for-action").split(" ").indexOf(select.value) < 0;
    });
  }

  function syncAll() {
    document.querySelectorAll("select#action_action").forEach(sync);
  }

  document.addEventListener("change", function (event) {
    if (event.target.matches && event.target.matches("select#action_action")) sync(event.target);
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", syncAll);
  else syncAll();
})();
