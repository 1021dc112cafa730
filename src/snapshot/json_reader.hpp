#pragma once
// Internal: a JSON dump of a snapshot read as a stream of events straight into the Document
// the pickle machine builds, so the seal hook replaces frames, blocks, segments and trace
// entries as they complete and a large dump never exists as a tree.

#include <memsnap/pickle/document.hpp>
#include <memsnap/pickle/limits.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace memsnap::snapshot::detail {

// Reads with RapidJSON's SAX reader, iteratively. Throws Error (input) naming `name`, with the
// byte offset where the syntax error or the exceeded limit was met. `consumed`, when
// given, is told every pickle::consumed_every bytes how far the parser got.
void read_json(std::string_view input, pickle::Document& doc, pickle::SealHook* hook, const pickle::Limits& limits,
               const std::string& name, const std::function<void(std::uint64_t)>& consumed = {});

}  // namespace memsnap::snapshot::detail
