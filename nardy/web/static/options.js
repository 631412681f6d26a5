// A variant option's input, as the analysis board (board.js) and the Play form (play.js) both
// offer the options (nardy/web/variant_options.py lists them): a checkbox for a bool, a list for
// an option with choices, else a number or text field, each showing the option's default. The
// two pages read the inputs back differently, so a choice's value is what `choiceValue` makes of
// it: the board sends the text (as `nardy hint -o` reads it), the Play form JSON.
"use strict";

// The label (the option's name, its help as the title) around the input, which carries
// data-option = the option's name; returns both so that each page adds what it reads.
function variantOptionField(o, choiceValue) {
  const label = document.createElement("label");
  label.title = o.help;
  let input;
  if (o.kind === "bool") {
    input = document.createElement("input");
    input.type = "checkbox";
    input.checked = !!o.default;
  } else if (o.choices.length) {
    input = document.createElement("select");
    for (const c of o.choices) {
      const opt = document.createElement("option");
      opt.value = choiceValue(c);
      opt.textContent = String(c);
      if (c === o.default) opt.selected = true;
      input.append(opt);
    }
  } else {
    input = document.createElement("input");
    input.type = o.kind === "int" ? "number" : "text";
    input.value = o.default === null ? "" : String(o.default);
  }
  input.dataset.option = o.name;
  label.append(o.name + " ", input);
  return { label, input };
}
