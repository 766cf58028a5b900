/// The sign-in pages' one script (PROTOCOL §12.1), served at `/static/passkey.js` under `script-src 'self'`: it
/// shows the passkey buttons (hidden without JavaScript or WebAuthn), runs `navigator.credentials`, and posts the
/// result as an ordinary form. Every value it needs is in the page's data attributes; nothing is fetched.
enum PasskeyScript {
    static let text = #"""
        "use strict";
        (function () {
          function encode(buffer) {
            var text = "";
            new Uint8Array(buffer).forEach(function (b) { text += String.fromCharCode(b); });
            return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
          }
          function decode(text) {
            text = text.replace(/-/g, "+").replace(/_/g, "/");
            while (text.length % 4) { text += "="; }
            return Uint8Array.from(atob(text), function (c) { return c.charCodeAt(0); });
          }
          function ids(list) {
            return (list || "").split(",").filter(Boolean).map(function (id) { return { type: "public-key", id: decode(id) }; });
          }
          function fail(form, error) {
            var alert = document.getElementById("passkey-error");
            if (!alert) { return; }
            alert.textContent = error && error.name === "NotAllowedError"
              ? "The passkey request was cancelled or timed out. Try again, or sign in another way."
              : "Your browser could not use a passkey" + (error && error.message ? ": " + error.message : ".");
            alert.hidden = false;
          }
          function set(form, name, value) {
            var input = form.querySelector("input[name='" + name + "']");
            if (!input) {
              input = document.createElement("input");
              input.type = "hidden";
              input.name = name;
              form.appendChild(input);
            }
            input.value = value;
          }
          function signIn(button) {
            var form = document.getElementById("passkey-assertion");
            var username = document.getElementById("username");
            var signin = document.getElementById("signin-form");
            if (signin && username && username.value.trim() !== "") {
              // User name first: the server answers with a page bound to that name (a discoverable request all the same).
              set(signin, "method", "passkey");
              signin.submit();
              return;
            }
            var data = form.dataset;
            navigator.credentials.get({
              publicKey: {
                challenge: decode(data.challenge), rpId: data.rpId, allowCredentials: ids(data.allow),
                userVerification: "required", timeout: 120000
              }
            }).then(function (credential) {
              var response = credential.response;
              set(form, "credentialId", encode(credential.rawId));
              set(form, "clientDataJSON", encode(response.clientDataJSON));
              set(form, "authenticatorData", encode(response.authenticatorData));
              set(form, "signature", encode(response.signature));
              set(form, "userHandle", response.userHandle ? encode(response.userHandle) : "");
              form.submit();
            }, function (error) { fail(form, error); });
          }
          function register(button) {
            var form = document.getElementById("passkey-registration");
            var data = form.dataset;
            navigator.credentials.create({
              publicKey: {
                challenge: decode(data.challenge), rp: { id: data.rpId, name: data.rpName },
                user: { id: decode(data.userId), name: data.userName, displayName: data.userDisplayName },
                pubKeyCredParams: [{ type: "public-key", alg: -7 }, { type: "public-key", alg: -8 }, { type: "public-key", alg: -257 }],
                authenticatorSelection: { residentKey: "preferred", userVerification: "required" },
                excludeCredentials: ids(data.exclude), attestation: "direct", timeout: 120000
              }
            }).then(function (credential) {
              var response = credential.response;
              set(form, "clientDataJSON", encode(response.clientDataJSON));
              set(form, "attestationObject", encode(response.attestationObject));
              set(form, "transports", response.getTransports ? response.getTransports().join(",") : "");
              form.submit();
            }, function (error) { fail(form, error); });
          }
          if (!window.PublicKeyCredential || !navigator.credentials) { return; }
          document.querySelectorAll("button[data-passkey]").forEach(function (button) {
            button.hidden = false;
            button.addEventListener("click", function (event) {
              event.preventDefault();
              var alert = document.getElementById("passkey-error");
              if (alert) { alert.hidden = true; }
              if (button.dataset.passkey === "register") { register(button); } else { signIn(button); }
            });
          });
        })();

        """#
}
