// Swagger UI on /api/docs/ (templates/api/swagger_ui.html). A file rather than drf-spectacular's
// inline initializer, which the Content-Security-Policy (no inline script) would block.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const root = document.getElementById("swagger-ui");
  // The sign-out form's token: calls tried from the page are sent with the session, as forms are.
  const csrf = document.querySelector("input[name=csrfmiddlewaretoken]");
  SwaggerUIBundle({
    url: root.dataset.schemaUrl,
    domNode: root,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    deepLinking: true,
    // The validator badge is an image from another site: the CSP blocks it, offline it fails.
    validatorUrl: null,
    requestInterceptor: (request) => {
      if (csrf && !["GET", "HEAD", "OPTIONS", undefined].includes(request.method)) {
        request.headers["X-CSRFToken"] = csrf.value;
      }
      return request;
    },
  });
});
