// SPDX-License-Identifier: Apache-2.0
// Private: move-only RAII handles over HDF5 ids and the few typed attribute/dataset helpers the
// store needs. HDF5 1.10 C API only. Failures throw h5_error carrying the innermost message of
// HDF5's error stack; the writer and reader turn it into a store_error naming the file.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "portbench/error.hpp"

namespace portbench::store::detail {

/// An HDF5 call failed; the writer and reader rethrow it as a store_error naming the file.
class h5_error : public portbench::error {
 public:
  explicit h5_error(const std::string& what, code_location where = code_location::current())
      : portbench::error(what, {.where = where}) {}
};

/// Turns off HDF5's automatic error printing (once per process) so that failures reach the
/// user as one line, not a stack dump on stderr.
void silence_hdf5_errors() noexcept;

/// "what: <innermost HDF5 message>", read from the current error stack.
[[nodiscard]] std::string describe_failure(std::string_view what);

/// Throws h5_error(describe_failure(what)) when `status` is negative; returns it otherwise.
template <typename T>
T check(T status, std::string_view what) {
  if (status < 0) throw h5_error(describe_failure(what));
  return status;
}

/// A move-only owner of one HDF5 id; `Close` errors are ignored (destructors never throw).
template <herr_t (*Close)(hid_t)>
class handle {
 public:
  handle() noexcept = default;
  explicit handle(hid_t id) noexcept : m_id(id) {}
  handle(handle&& other) noexcept : m_id(std::exchange(other.m_id, H5I_INVALID_HID)) {}
  handle& operator=(handle&& other) noexcept {
    if (this != &other) {
      reset();
      m_id = std::exchange(other.m_id, H5I_INVALID_HID);
    }
    return *this;
  }
  handle(const handle&) = delete;
  handle& operator=(const handle&) = delete;
  ~handle() { reset(); }

  void reset() noexcept {
    if (m_id >= 0) static_cast<void>(Close(m_id));
    m_id = H5I_INVALID_HID;
  }
  [[nodiscard]] hid_t get() const noexcept { return m_id; }
  /// Gives up ownership without closing.
  [[nodiscard]] hid_t release() noexcept { return std::exchange(m_id, H5I_INVALID_HID); }
  [[nodiscard]] explicit operator bool() const noexcept { return m_id >= 0; }

 private:
  hid_t m_id = H5I_INVALID_HID;
};

using file_handle = handle<&H5Fclose>;
using group_handle = handle<&H5Gclose>;
using dataset_handle = handle<&H5Dclose>;
using dataspace_handle = handle<&H5Sclose>;
using datatype_handle = handle<&H5Tclose>;
using attribute_handle = handle<&H5Aclose>;
using plist_handle = handle<&H5Pclose>;

/// Group (or file) creation properties that keep up to 64 attributes compact in the header.
[[nodiscard]] plist_handle compact_attributes_plist(hid_t plist_class);

/// Variable-length UTF-8 string type.
[[nodiscard]] datatype_handle utf8_string_type();

[[nodiscard]] bool link_exists(hid_t parent, const std::string& name);
/// Like link_exists, for a '/'-separated path whose intermediate groups may be missing.
[[nodiscard]] bool path_exists(hid_t parent, const std::string& path);
[[nodiscard]] group_handle open_group(hid_t parent, const std::string& name);
/// Creates a group (and missing parents); opens it when it already exists.
[[nodiscard]] group_handle open_or_create_group(hid_t parent, const std::string& name);
/// Names of the links in a group, in name order.
[[nodiscard]] std::vector<std::string> child_names(hid_t group);

// Scalar and 1-D attributes; writing replaces an existing attribute of the same name.
void write_attribute(hid_t obj, const std::string& name, std::string_view value);
void write_attribute(hid_t obj, const std::string& name, std::int64_t value);
void write_attribute(hid_t obj, const std::string& name, double value);
void write_attribute(hid_t obj, const std::string& name, std::span<const std::int64_t> values);

[[nodiscard]] bool has_attribute(hid_t obj, const std::string& name);
[[nodiscard]] std::vector<std::string> attribute_names(hid_t obj);
/// String attribute (variable or fixed length); nullopt when absent or not a string.
[[nodiscard]] std::optional<std::string> read_string_attribute(hid_t obj, const std::string& name);
[[nodiscard]] std::optional<std::int64_t> read_int_attribute(hid_t obj, const std::string& name);
[[nodiscard]] std::optional<double> read_double_attribute(hid_t obj, const std::string& name);
[[nodiscard]] std::vector<std::int64_t> read_int_array_attribute(hid_t obj, const std::string& name);

/// All scalar attributes of an object in one pass (one open per attribute): strings in `text`,
/// integers and floats in `number` (integers up to 2^53 are exact). Arrays are left out.
struct scalar_attributes {
  std::map<std::string, std::string, std::less<>> text;
  std::map<std::string, double, std::less<>> number;
};
[[nodiscard]] scalar_attributes read_scalar_attributes(hid_t obj);

/// 1-D datasets (contiguous, written in one call), with a `units` string attribute.
void write_dataset(hid_t group, const std::string& name, std::span<const std::int64_t> values,
                   std::string_view units);
void write_dataset(hid_t group, const std::string& name, std::span<const std::int32_t> values,
                   std::string_view units);
/// A 2-D dataset [values / columns][columns], row-major.
void write_matrix(hid_t group, const std::string& name, std::span<const std::int64_t> values, std::size_t columns,
                  std::string_view units);
/// Reads a dataset of any rank as its values in row-major order (a 2-D dataset flattened).
[[nodiscard]] std::vector<std::int64_t> read_int64_dataset(hid_t group, const std::string& name);
[[nodiscard]] std::vector<std::int32_t> read_int32_dataset(hid_t group, const std::string& name);

}  // namespace portbench::store::detail
