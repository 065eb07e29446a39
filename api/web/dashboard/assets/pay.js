// A plan's payment link: opens a checkout session for the plan (asking
// for the amount when the plan lets the payer choose it) and sends the
// payer to the session's hosted checkout page.
const planId = location.pathname.split("/").filter(Boolean).pop();
const $ = (id) => document.getElementById(id);

async function open(amountUsd) {
  const body = { paymentPlanId: planId };
  if (amountUsd !== undefined) body.amountUsd = amountUsd;
  let res, env;
  try {
    res = await fetch("/api/v1/checkout/sessions", {
      method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" }, body: JSON.stringify(body),
    });
    env = await res.json();
  } catch {
    return fail("The payment service could not be reached. Try again in a moment.");
  }
  if (env.success && env.data.url) {
    location.replace(env.data.url);
    return;
  }
  const details = (env.error && env.error.details) || [];
  const amount = details.find((d) => d.field === "amountUsd");
  if (res.status === 422 && amount) {
    $("title").textContent = "How much do you want to pay?";
    $("message").textContent = "";
    $("amount-form").hidden = false;
    if (amountUsd !== undefined) {
      $("amount-error").textContent = amount.message;
      $("amount-error").hidden = false;
    }
    $("amount").focus();
    return;
  }
  fail(res.status === 404 ? "This payment link does not exist or is no longer active."
    : (env.message || "The checkout could not be opened."));
}

function fail(text) {
  $("title").textContent = "Checkout unavailable";
  $("message").textContent = text;
}

$("amount-form").addEventListener("submit", (e) => {
  e.preventDefault();
  open($("amount").value.trim());
});
open();
