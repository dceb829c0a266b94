// A CodeMirror stream mode for Aurane (.aur): keywords, comments, strings, numbers, calls,
// suffixes (`.relu`) and `as` names.
const KEYWORDS = new Set([
  "model", "dataset", "experiment", "train", "train_gan", "use", "def", "return", "as", "on",
  "from", "repeat",
]);
const ATOMS = new Set(["true", "false", "True", "False", "None", "none", "null"]);

export const aurane = {
  name: "aurane",
  startState: () => ({}),
  token(stream) {
    if (stream.eatSpace()) return null;
    if (stream.peek() === "#") {
      stream.skipToEnd();
      return "comment";
    }
    if (stream.match(/^"([^"\\]|\\.)*"?/) || stream.match(/^'([^'\\]|\\.)*'?/)) return "string";
    if (stream.match(/^-?\d+(\.\d+)?([eE][-+]?\d+)?/)) return "number";
    if (stream.match("->")) return "operator";
    if (stream.match(/^\.[A-Za-z_]\w*/)) return "property";
    if (stream.match(/^[A-Za-z_]\w*/)) {
      const word = stream.current();
      if (KEYWORDS.has(word)) return "keyword";
      if (ATOMS.has(word)) return "atom";
      if (stream.peek() === "(") return /^[A-Z]/.test(word) ? "def" : "builtin";
      if (/^[A-Z]/.test(word)) return "def";
      if (stream.peek() === "=" || stream.match(/^\s*=(?!=)/, false)) return "variable-2";
      return "variable";
    }
    stream.next();
    return null;
  },
  languageData: { commentTokens: { line: "#" } },
};
