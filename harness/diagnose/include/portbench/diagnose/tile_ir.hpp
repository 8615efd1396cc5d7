// SPDX-License-Identifier: Apache-2.0
// Tile IR text (MLIR) as a tree of regions and operations. The parser is MLIR-generic: it knows
// the shape of the text (results, op name, operands, attributes, " : " types, nested regions
// with block arguments, locations), not the operations, so both printers the bundles carry
// (tileirdisasm's and cutile-rs's) and any new op parse into the same model. SSA names are kept
// only to resolve uses; nothing downstream compares them.
#pragma once
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace portbench::diagnose::tile_ir {

/// Text that is not Tile IR as the parser understands it: "<origin>:<line>: <cause>".
class parse_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One use of an SSA value: `%x` or `%x#1` (result 1 of a multi-result op).
struct value_use {
  std::string name;  ///< without '%', with "#k" when the text names a result index
};

/// optimization_hints of an entry or an op: target ("default", "sm_90") -> key -> value text.
using hint_map = std::map<std::string, std::map<std::string, std::string>>;

struct region;

struct operation {
  std::string name;                    ///< op name without the `cuda_tile.` dialect prefix
  std::vector<std::string> results;    ///< value names this op defines ("x", or "x#0", "x#1")
  std::vector<value_use> operands;     ///< every %value the op's text mentions, in order
  std::string attributes;              ///< text after the name up to the top-level " : ", SSA names as '%'
  std::string types;                   ///< text after the top-level " : " (may be empty)
  hint_map hints;                      ///< optimization_hints on the op, if any
  std::vector<region> regions;
  int line = 0;                        ///< 1-based line in the source text
};

struct region {
  std::vector<std::string> arguments;       ///< block argument names
  std::vector<std::string> argument_types;
  std::vector<operation> ops;
};

/// A kernel entry: `entry @symbol(%a: type, ...) attributes { body }`.
struct function {
  std::string symbol;
  std::vector<std::string> argument_types;
  hint_map hints;            ///< from the entry's optimization_hints
  std::string attributes;    ///< everything between ')' and '{', verbatim (e.g. di_name)
  region body;
  int line = 0;
};

struct module {
  std::string origin;                ///< file name, for messages
  std::vector<function> functions;   ///< every entry, at any nesting depth (module wrappers)
  [[nodiscard]] const function* find(std::string_view symbol) const noexcept;
};

/// Parses Tile IR text; throws parse_error naming `origin` and the line.
[[nodiscard]] module parse(std::string_view text, const std::string& origin);

/// Parses `optimization_hints` syntax at the start of `text` (after the keyword and '='):
/// `<default = {occupancy = 4}>` or `#cuda_tile.optimization_hints<sm_90 = {occupancy = 4}>`.
[[nodiscard]] hint_map parse_hints(std::string_view text);

}  // namespace portbench::diagnose::tile_ir
