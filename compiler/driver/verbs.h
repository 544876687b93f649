// The verbs of aasmc, one function each (driver/<verb>.cpp); driver/aasmc.cpp
// dispatches on their names. Each returns the process's exit code.
#pragma once

#include <string>
#include <vector>

namespace aasmc {

using Args = std::vector<std::string>;

int compile_verb(const Args& args);
int explain_verb(const Args& args);
int show_verb(const Args& args);
int groups_verb(const Args& args);
int digest_verb(const Args& args);
int verify_verb(const Args& args);
int diff_verb(const Args& args);
// `aasmc receipt verify RECEIPT [--json]`: 0 the seal and every rule hold,
// 1 one does not or the file is no receipt, 2 usage (driver/receipt_verify.cpp).
int receipt_verb(const Args& args);
int suggest_verb(const Args& args);  // driver/suggest.cpp
// `aasmc backends [--json]`: what each backend can enforce (driver/backends.cpp).
int backends_verb(const Args& args);
// `aasmc export --format oci|systemd POLICY...`: another backend's format (driver/export.cpp).
int export_verb(const Args& args);
// `aasmc import --from srt|oci FILE.json [-o POLICY.yaml]`: a policy users
// already have as an aasm policy (driver/import.cpp).
int import_verb(const Args& args);

}  // namespace aasmc
