#include "emulator/arm/output_files.h"

#include "emulator/arm/cloud_error.h"

namespace bai::arm {

void list_output_files(ArmContext&, const ArmRequest&, const StoredResource&, httplib::Response&) {
    throw CloudError(501, "NotImplemented", "listOutputFiles is not served yet by this emulator");
}

}  // namespace bai::arm
