// Broker forms: show the management URL only for kinds whose adapters use one.
(function () {
  "use strict";
  document.querySelectorAll("form.broker-form").forEach(function (form) {
    var holder = form.querySelector("[data-management-url]");
    if (!holder) return;
    var kinds = (holder.getAttribute("data-kinds") || "").split(" ");
    var select = form.querySelector("select[name=kind]");
    function kind() { return select ? select.value : form.getAttribute("data-kind"); }
    function update() {
      var used = kinds.indexOf(kind()) !== -1;
      var input = holder.querySelector("input");
      holder.hidden = !used && !(input && input.value);
    }
    if (select) select.addEventListener("change", update);
    update();
  });
})();
