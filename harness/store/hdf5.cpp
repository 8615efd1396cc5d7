// SPDX-License-Identifier: Apache-2.0
#include "hdf5.hpp"

#include <mutex>

namespace portbench::store::detail {
namespace {

herr_t take_innermost(unsigned n, const H5E_error2_t* err, void* out) {
  auto* msg = static_cast<std::string*>(out);
  if (n == 0 && err != nullptr && err->desc != nullptr) *msg = err->desc;
  return 0;
}

template <typename T>
hid_t native_type();
template <>
hid_t native_type<std::int64_t>() { return H5T_NATIVE_INT64; }
template <>
hid_t native_type<std::int32_t>() { return H5T_NATIVE_INT32; }

template <typename T>
hid_t file_type();
template <>
hid_t file_type<std::int64_t>() { return H5T_STD_I64LE; }
template <>
hid_t file_type<std::int32_t>() { return H5T_STD_I32LE; }

void delete_attribute_if_present(hid_t obj, const std::string& name) {
  if (check(H5Aexists(obj, name.c_str()), "H5Aexists " + name) > 0) {
    check(H5Adelete(obj, name.c_str()), "H5Adelete " + name);
  }
}

attribute_handle create_attribute(hid_t obj, const std::string& name, hid_t type, hid_t space) {
  delete_attribute_if_present(obj, name);
  return attribute_handle{check(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT),
                                "create attribute " + name)};
}

template <typename T>
void write_dataset_impl(hid_t group, const std::string& name, std::span<const T> values,
                        std::string_view units, std::size_t columns = 0) {
  // columns 0: 1-D; else [rows][columns].
  hsize_t dims[2] = {values.size(), 1};
  if (columns > 0) dims[0] = values.size() / columns, dims[1] = columns;
  dataspace_handle space{check(H5Screate_simple(columns > 0 ? 2 : 1, dims, nullptr), "H5Screate_simple")};
  dataset_handle ds{check(H5Dcreate2(group, name.c_str(), file_type<T>(), space.get(), H5P_DEFAULT,
                                     H5P_DEFAULT, H5P_DEFAULT),
                          "create dataset " + name)};
  if (!values.empty()) {
    check(H5Dwrite(ds.get(), native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
          "write dataset " + name);
  }
  write_attribute(ds.get(), "units", units);
}

template <typename T>
std::vector<T> read_dataset_impl(hid_t group, const std::string& name) {
  dataset_handle ds{check(H5Dopen2(group, name.c_str(), H5P_DEFAULT), "open dataset " + name)};
  dataspace_handle space{check(H5Dget_space(ds.get()), "H5Dget_space " + name)};
  hssize_t n = check(H5Sget_simple_extent_npoints(space.get()), "extent of " + name);
  std::vector<T> out(static_cast<std::size_t>(n));
  if (n > 0) {
    check(H5Dread(ds.get(), native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()),
          "read dataset " + name);
  }
  return out;
}

}  // namespace

void silence_hdf5_errors() noexcept {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

std::string describe_failure(std::string_view what) {
  std::string inner;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, &take_innermost, &inner);
  H5Eclear2(H5E_DEFAULT);
  std::string msg(what);
  if (!inner.empty()) msg += ": " + inner;
  return msg;
}

datatype_handle utf8_string_type() {
  datatype_handle t{check(H5Tcopy(H5T_C_S1), "H5Tcopy")};
  check(H5Tset_size(t.get(), H5T_VARIABLE), "H5Tset_size");
  check(H5Tset_cset(t.get(), H5T_CSET_UTF8), "H5Tset_cset");
  return t;
}

bool link_exists(hid_t parent, const std::string& name) {
  return check(H5Lexists(parent, name.c_str(), H5P_DEFAULT), "H5Lexists " + name) > 0;
}

plist_handle compact_attributes_plist(hid_t plist_class) {
  plist_handle p{check(H5Pcreate(plist_class), "H5Pcreate")};
  // A run group has ~20 attributes: keep them in the object header (one read, no heap) instead
  // of HDF5's default dense storage above 8. Attributes over 64 KiB still go dense by themselves.
  check(H5Pset_attr_phase_change(p.get(), 64, 48), "H5Pset_attr_phase_change");
  return p;
}

bool path_exists(hid_t parent, const std::string& path) {
  std::size_t end = 0;
  while (end != std::string::npos) {
    end = path.find('/', end + 1);
    std::string prefix = path.substr(0, end);
    if (!link_exists(parent, prefix)) return false;
  }
  return true;
}

group_handle open_group(hid_t parent, const std::string& name) {
  return group_handle{check(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), "open group " + name)};
}

group_handle open_or_create_group(hid_t parent, const std::string& name) {
  // Walk the path one link at a time: H5Lexists needs every parent to exist.
  group_handle current{check(H5Oopen(parent, ".", H5P_DEFAULT), "open parent")};
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t slash = name.find('/', start);
    std::string part = name.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (!part.empty()) {
      group_handle next;
      if (link_exists(current.get(), part)) {
        next = open_group(current.get(), part);
      } else {
        plist_handle gcpl = compact_attributes_plist(H5P_GROUP_CREATE);
        next = group_handle{check(H5Gcreate2(current.get(), part.c_str(), H5P_DEFAULT, gcpl.get(),
                                             H5P_DEFAULT),
                                  "create group " + part)};
      }
      current = std::move(next);
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return current;
}

std::vector<std::string> child_names(hid_t group) {
  H5G_info_t info;
  check(H5Gget_info(group, &info), "H5Gget_info");
  std::vector<std::string> names;
  names.reserve(info.nlinks);
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    ssize_t len = check(H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0,
                                           H5P_DEFAULT),
                        "link name");
    std::string name(static_cast<std::size_t>(len) + 1, '\0');
    check(H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(),
                             H5P_DEFAULT),
          "link name");
    name.resize(static_cast<std::size_t>(len));
    names.push_back(std::move(name));
  }
  return names;
}

void write_attribute(hid_t obj, const std::string& name, std::string_view value) {
  datatype_handle type = utf8_string_type();
  dataspace_handle space{check(H5Screate(H5S_SCALAR), "H5Screate")};
  attribute_handle attr = create_attribute(obj, name, type.get(), space.get());
  std::string copy(value);
  const char* ptr = copy.c_str();
  check(H5Awrite(attr.get(), type.get(), &ptr), "write attribute " + name);
}

void write_attribute(hid_t obj, const std::string& name, std::int64_t value) {
  dataspace_handle space{check(H5Screate(H5S_SCALAR), "H5Screate")};
  attribute_handle attr = create_attribute(obj, name, H5T_STD_I64LE, space.get());
  check(H5Awrite(attr.get(), H5T_NATIVE_INT64, &value), "write attribute " + name);
}

void write_attribute(hid_t obj, const std::string& name, double value) {
  dataspace_handle space{check(H5Screate(H5S_SCALAR), "H5Screate")};
  attribute_handle attr = create_attribute(obj, name, H5T_IEEE_F64LE, space.get());
  check(H5Awrite(attr.get(), H5T_NATIVE_DOUBLE, &value), "write attribute " + name);
}

void write_attribute(hid_t obj, const std::string& name, std::span<const std::int64_t> values) {
  hsize_t dims[1] = {values.size()};
  dataspace_handle space{check(H5Screate_simple(1, dims, nullptr), "H5Screate_simple")};
  attribute_handle attr = create_attribute(obj, name, H5T_STD_I64LE, space.get());
  if (!values.empty()) {
    check(H5Awrite(attr.get(), H5T_NATIVE_INT64, values.data()), "write attribute " + name);
  }
}

bool has_attribute(hid_t obj, const std::string& name) {
  return check(H5Aexists(obj, name.c_str()), "H5Aexists " + name) > 0;
}

std::vector<std::string> attribute_names(hid_t obj) {
  H5O_info_t info;
  check(H5Oget_info2(obj, &info, H5O_INFO_NUM_ATTRS), "H5Oget_info2");
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.num_attrs; ++i) {
    ssize_t len = check(H5Aget_name_by_idx(obj, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0,
                                           H5P_DEFAULT),
                        "attribute name");
    std::string name(static_cast<std::size_t>(len) + 1, '\0');
    check(H5Aget_name_by_idx(obj, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(),
                             H5P_DEFAULT),
          "attribute name");
    name.resize(static_cast<std::size_t>(len));
    names.push_back(std::move(name));
  }
  return names;
}

namespace {

/// Reads an open string attribute of type `type` (variable or fixed length, one element).
std::string read_string_value(hid_t attr, hid_t type, const std::string& name) {
  if (check(H5Tis_variable_str(type), "H5Tis_variable_str") > 0) {
    datatype_handle mem{check(H5Tcopy(H5T_C_S1), "H5Tcopy")};
    check(H5Tset_size(mem.get(), H5T_VARIABLE), "H5Tset_size");
    check(H5Tset_cset(mem.get(), H5Tget_cset(type)), "H5Tset_cset");
    char* ptr = nullptr;
    check(H5Aread(attr, mem.get(), &ptr), "read attribute " + name);
    std::string value = ptr != nullptr ? std::string(ptr) : std::string();
    H5free_memory(ptr);
    return value;
  }
  std::size_t size = H5Tget_size(type);
  std::string value(size, '\0');
  check(H5Aread(attr, type, value.data()), "read attribute " + name);
  auto nul = value.find('\0');
  if (nul != std::string::npos) value.resize(nul);
  return value;
}

}  // namespace

std::optional<std::string> read_string_attribute(hid_t obj, const std::string& name) {
  if (!has_attribute(obj, name)) return std::nullopt;
  attribute_handle attr{check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), "open attribute " + name)};
  datatype_handle type{check(H5Aget_type(attr.get()), "H5Aget_type " + name)};
  if (H5Tget_class(type.get()) != H5T_STRING) return std::nullopt;
  dataspace_handle space{check(H5Aget_space(attr.get()), "H5Aget_space " + name)};
  if (check(H5Sget_simple_extent_npoints(space.get()), "extent") != 1) return std::nullopt;
  return read_string_value(attr.get(), type.get(), name);
}

std::optional<std::int64_t> read_int_attribute(hid_t obj, const std::string& name) {
  if (!has_attribute(obj, name)) return std::nullopt;
  attribute_handle attr{check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), "open attribute " + name)};
  datatype_handle type{check(H5Aget_type(attr.get()), "H5Aget_type " + name)};
  if (H5Tget_class(type.get()) != H5T_INTEGER) return std::nullopt;
  std::int64_t value = 0;
  check(H5Aread(attr.get(), H5T_NATIVE_INT64, &value), "read attribute " + name);
  return value;
}

std::optional<double> read_double_attribute(hid_t obj, const std::string& name) {
  if (!has_attribute(obj, name)) return std::nullopt;
  attribute_handle attr{check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), "open attribute " + name)};
  datatype_handle type{check(H5Aget_type(attr.get()), "H5Aget_type " + name)};
  H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) return std::nullopt;
  double value = 0;
  check(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value), "read attribute " + name);
  return value;
}

std::vector<std::int64_t> read_int_array_attribute(hid_t obj, const std::string& name) {
  if (!has_attribute(obj, name)) return {};
  attribute_handle attr{check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), "open attribute " + name)};
  datatype_handle type{check(H5Aget_type(attr.get()), "H5Aget_type " + name)};
  if (H5Tget_class(type.get()) != H5T_INTEGER) return {};
  dataspace_handle space{check(H5Aget_space(attr.get()), "H5Aget_space " + name)};
  hssize_t n = check(H5Sget_simple_extent_npoints(space.get()), "extent");
  std::vector<std::int64_t> values(static_cast<std::size_t>(n));
  if (n > 0) check(H5Aread(attr.get(), H5T_NATIVE_INT64, values.data()), "read attribute " + name);
  return values;
}

namespace {

herr_t collect_attribute(hid_t obj, const char* name, const H5A_info_t*, void* data) try {
  auto* out = static_cast<scalar_attributes*>(data);
  hid_t attr = H5Aopen(obj, name, H5P_DEFAULT);
  if (attr < 0) return -1;
  attribute_handle a{attr};
  datatype_handle type{H5Aget_type(attr)};
  dataspace_handle space{H5Aget_space(attr)};
  if (!type || !space || H5Sget_simple_extent_npoints(space.get()) != 1) return 0;
  H5T_class_t cls = H5Tget_class(type.get());
  if (cls == H5T_INTEGER || cls == H5T_FLOAT) {
    double v = 0;
    if (H5Aread(attr, H5T_NATIVE_DOUBLE, &v) < 0) return -1;
    out->number.emplace(name, v);
  } else if (cls == H5T_STRING) {
    out->text.emplace(name, read_string_value(attr, type.get(), name));
  }
  return 0;
} catch (...) {
  return -1;  // never let an exception cross HDF5's C frames
}

}  // namespace

scalar_attributes read_scalar_attributes(hid_t obj) {
  scalar_attributes out;
  check(H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_NATIVE, nullptr, &collect_attribute, &out),
        "read attributes");
  return out;
}

void write_dataset(hid_t group, const std::string& name, std::span<const std::int64_t> values,
                   std::string_view units) {
  write_dataset_impl(group, name, values, units);
}

void write_dataset(hid_t group, const std::string& name, std::span<const std::int32_t> values,
                   std::string_view units) {
  write_dataset_impl(group, name, values, units);
}

void write_matrix(hid_t group, const std::string& name, std::span<const std::int64_t> values, std::size_t columns,
                  std::string_view units) {
  if (columns == 0 || values.size() % columns != 0) {
    throw h5_error("dataset " + name + ": " + std::to_string(values.size()) + " values are not rows of " +
                   std::to_string(columns));
  }
  write_dataset_impl(group, name, values, units, columns);
}

std::vector<std::int64_t> read_int64_dataset(hid_t group, const std::string& name) {
  return read_dataset_impl<std::int64_t>(group, name);
}

std::vector<std::int32_t> read_int32_dataset(hid_t group, const std::string& name) {
  return read_dataset_impl<std::int32_t>(group, name);
}

}  // namespace portbench::store::detail
