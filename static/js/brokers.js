// Broker forms: show the management URL only for kinds whose adapters use one, and the URL's
// example and the management URL's help of the chosen kind (as its adapter declares them).
(function () {
  "use strict";
  var data = document.getElementById("broker-kind-help");
  var help = data ? JSON.parse(data.textContent) : {};
  document.querySelectorAll("form.broker-form").forEach(function (form) {
    var holder = form.querySelector("[data-management-url]");
    if (!holder) return;
    var kinds = (holder.getAttribute("data-kinds") || "").split(" ");
    var select = form.querySelector("select[name=kind]");
    var url = form.querySelector("input[name=url]");
    var managementHelp = holder.querySelector("[data-management-help]");
    function kind() { return select ? select.value : form.getAttribute("data-kind"); }
    function update() {
      var used = kinds.indexOf(kind()) !== -1;
      var input = holder.querySelector("input");
      var mine = help[kind()] || {};
      holder.hidden = !used && !(input && input.value);
      if (url) {
        if (mine.url) url.setAttribute("placeholder", mine.url); else url.removeAttribute("placeholder");
      }
      if (managementHelp) managementHelp.textContent = mine.management_url || "";
    }
    if (select) select.addEventListener("change", update);
    update();
  });
})();
