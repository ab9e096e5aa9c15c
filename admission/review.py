"""AdmissionReview `admission.k8s.io/v1`, parsed and answered with pydantic at the boundary.

Only what a validating webhook reads is modelled; unknown fields are ignored so newer API servers
keep working. Field names follow the API (camelCase) through aliases.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

API_VERSION = "admission.k8s.io/v1"


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class GroupVersionKind(_Model):
    group: str = ""
    version: str = ""
    kind: str


class GroupVersionResource(_Model):
    group: str = ""
    version: str = ""
    resource: str


class UserInfo(_Model):
    username: str = ""
    uid: str = ""
    groups: list[str] = Field(default_factory=list)
    extra: dict[str, list[str]] = Field(default_factory=dict)


class AdmissionRequest(_Model):
    uid: str = Field(min_length=1)
    kind: GroupVersionKind
    resource: GroupVersionResource
    sub_resource: str = Field("", alias="subResource")
    name: str = ""
    namespace: str = ""
    operation: Literal["CREATE", "UPDATE", "DELETE", "CONNECT"]
    user_info: UserInfo = Field(default_factory=UserInfo, alias="userInfo")
    object: dict[str, Any] | None = None
    old_object: dict[str, Any] | None = Field(None, alias="oldObject")
    dry_run: bool = Field(False, alias="dryRun")


class AdmissionReview(_Model):
    api_version: Literal["admission.k8s.io/v1"] = Field(alias="apiVersion")
    kind: Literal["AdmissionReview"]
    request: AdmissionRequest


class Status(_Model):
    code: int
    message: str
    reason: str = ""


class AdmissionResponse(_Model):
    uid: str
    allowed: bool
    status: Status | None = None
    warnings: list[str] | None = None
    audit_annotations: dict[str, str] | None = Field(None, alias="auditAnnotations")


class AdmissionReviewResponse(_Model):
    api_version: str = Field(API_VERSION, alias="apiVersion")
    kind: str = "AdmissionReview"
    response: AdmissionResponse

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True)
