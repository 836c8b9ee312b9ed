// The bulk action form: show the target queue only when the action is a move.
// Without this script the field is simply always shown (and ignored unless moving).
(function () {
  "use strict";

  function sync(select) {
    var form = select.form;
    if (!form) return;
    form.querySelectorAll("[data-shown-for-action]").forEach(function (field) {
      field.hidden = field.getAttribute("data-shown-for-action") !== select.value;
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
