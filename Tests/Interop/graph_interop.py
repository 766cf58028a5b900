#!/usr/bin/env python3
"""The Microsoft Graph SDKs for Python against a real Portcullis (PROTOCOL §20), run by scripts/graph-interop.

Phase `sdk` (base URL https://localhost): msgraph-sdk and msgraph-beta-sdk with azure-identity's ClientSecretCredential
given `authority=` and `disable_instance_discovery=True`, the request adapter's `base_url` set:
  - conditional-access policies listed, created with the SDK's typed models, read with $select, changed with PATCH and
    deleted — each seen through /admin/v1 too (one store) and in the audit log;
  - named locations paged with PageIterator ($top and the absolute @odata.nextLink);
  - users with $filter/$select/$top/$count and ConsistencyLevel: eventual; groups and their members (added and removed
    by reference); role definitions; subscribedSkus and organization;
  - ODataError for an unknown ID, and for a write once the app's Policy.ReadWrite.ConditionalAccess is unassigned (the
    token still claims it: the assignment is checked now);
  - $batch through the SDK's BatchRequestContent;
  - evolvable enums: `linux` reads unknownFutureValue without Prefer: include-unknown-enum-members, linux with it;
  - every corpus policy the admin API accepts (its dry run) round-trips through the SDK's typed models (beta, with the
    Prefer header) and reads back with the same meaning;
  - continuous access evaluation: the SDK's token revoked (RFC 7009), the next call challenged with insufficient_claims,
    and the SDK retries with a new token.
Phase `unmodified` (base URL https://login.microsoftonline.com, hosts mapped to loopback): GraphServiceClient with only
a credential (no authority, no base URL) reads the policies as it would from Entra.
"""
import argparse
import asyncio
import base64
import json
import os
import sys
import traceback

import requests

TENANT = "7e1b0c54-2f6a-4c1e-9d3b-5a8f0e2c4b71"
GRAPH_TOOLS = "c0ffee00-9999-4a2b-8c3d-4e5f6a7b8c09"
GRAPH_TOOLS_SECRET = "graph-tools-dev-secret-change-me"
ADMIN_CLI = "c0ffee00-3333-4a2b-8c3d-4e5f6a7b8c03"
ADMIN_SECRET = "admin-dev-secret-change-me"
ALICE = "0c9e3a1f-5b7d-4e2a-8c6f-1d3b5a7e9f01"
CAROL = "2e7a5c3b-7d9f-4a4c-8e8b-3f5d7c9a1b03"
SALES = "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c51"
GRAPH = "https://graph.microsoft.com"

failures = []


def check(condition, what, detail=None):
    if condition:
        print(f"  ok  {what}")
    else:
        print(f"  FAIL {what}" + (f": {detail}" if detail is not None else ""))
        failures.append(what)
    return condition


class Admin:
    """The admin API (/admin/v1) with the admin CLI's client credentials: set-up and cross-checks."""

    def __init__(self, base):
        self.base = base
        token = requests.post(
            f"{base}/{TENANT}/oauth2/v2.0/token",
            data={"grant_type": "client_credentials", "client_id": ADMIN_CLI, "client_secret": ADMIN_SECRET, "scope": "api://portcullis-admin/.default"},
        ).json()["access_token"]
        self.headers = {"Authorization": f"Bearer {token}"}

    def get(self, path):
        response = requests.get(f"{self.base}/admin/v1/{path}", headers=self.headers)
        return response.status_code, (response.json() if response.content else None)

    def send(self, method, path, body=None, headers=None):
        response = requests.request(method, f"{self.base}/admin/v1/{path}", headers={**self.headers, **(headers or {})}, json=body)
        return response.status_code, (response.json() if response.content else None)


def sdk_client(base, beta=False):
    from azure.identity import ClientSecretCredential
    from kiota_authentication_azure.azure_identity_authentication_provider import AzureIdentityAuthenticationProvider

    if beta:
        from msgraph_beta import GraphRequestAdapter, GraphServiceClient
    else:
        from msgraph import GraphRequestAdapter, GraphServiceClient
    credential = ClientSecretCredential(TENANT, GRAPH_TOOLS, GRAPH_TOOLS_SECRET, authority=base, disable_instance_discovery=True)
    host = base.split("://", 1)[1]
    provider = AzureIdentityAuthenticationProvider(credential, scopes=[f"{GRAPH}/.default"], allowed_hosts=[host])
    adapter = GraphRequestAdapter(provider)
    adapter.base_url = f"{base}/{'beta' if beta else 'v1.0'}"
    return GraphServiceClient(request_adapter=adapter), adapter, credential


async def expect_odata_error(awaitable, status, code, what):
    from msgraph.generated.models.o_data_errors.o_data_error import ODataError

    try:
        await awaitable
    except ODataError as error:
        got = (error.response_status_code, error.error.code if error.error else None)
        check(got == (status, code), what, got)
        return error
    except Exception as error:  # noqa: BLE001 - any other error is a failure to report
        check(False, what, repr(error))
        return None
    check(False, what, "no error")
    return None


async def phase_sdk(base, corpus):
    from kiota_abstractions.base_request_configuration import RequestConfiguration
    from msgraph.generated.identity.conditional_access.policies.policies_request_builder import PoliciesRequestBuilder
    from msgraph.generated.models.conditional_access_applications import ConditionalAccessApplications
    from msgraph.generated.models.conditional_access_client_app import ConditionalAccessClientApp
    from msgraph.generated.models.conditional_access_condition_set import ConditionalAccessConditionSet
    from msgraph.generated.models.conditional_access_device_platform import ConditionalAccessDevicePlatform
    from msgraph.generated.models.conditional_access_grant_control import ConditionalAccessGrantControl
    from msgraph.generated.models.conditional_access_grant_controls import ConditionalAccessGrantControls
    from msgraph.generated.models.conditional_access_platforms import ConditionalAccessPlatforms
    from msgraph.generated.models.conditional_access_policy import ConditionalAccessPolicy
    from msgraph.generated.models.conditional_access_policy_state import ConditionalAccessPolicyState
    from msgraph.generated.models.conditional_access_users import ConditionalAccessUsers
    from msgraph.generated.models.ip_named_location import IpNamedLocation
    from msgraph.generated.models.i_pv4_cidr_range import IPv4CidrRange
    from msgraph.generated.models.reference_create import ReferenceCreate
    from msgraph.generated.users.users_request_builder import UsersRequestBuilder
    from msgraph_core import PageIterator

    admin = Admin(base)
    client, adapter, credential = sdk_client(base)

    print("conditional access: list, create with typed models, $select, PATCH, DELETE")
    listed = await client.identity.conditional_access.policies.get()
    status, stored = admin.get("conditional-access/policies")
    check(
        sorted(p.display_name for p in listed.value) == sorted(p["displayName"] for p in stored["value"]),
        "the SDK lists the policies the admin API has",
        [len(listed.value), len(stored["value"])],
    )
    first = listed.value[0]
    check(first.conditions is not None and first.grant_controls is not None and first.state is not None, "typed models read the conditions, grant controls and state")
    policy = ConditionalAccessPolicy(
        display_name="Graph SDK: require MFA for Sales (report-only)",
        state=ConditionalAccessPolicyState.EnabledForReportingButNotEnforced,
        conditions=ConditionalAccessConditionSet(
            users=ConditionalAccessUsers(include_groups=[SALES]),
            applications=ConditionalAccessApplications(include_applications=["All"]),
            client_app_types=[ConditionalAccessClientApp.All],
        ),
        grant_controls=ConditionalAccessGrantControls(operator="OR", built_in_controls=[ConditionalAccessGrantControl.Mfa]),
    )
    created = await client.identity.conditional_access.policies.post(policy)
    check(created is not None and created.id and created.display_name == policy.display_name, "POST creates the policy and answers it (201)")
    status, seen = admin.get(f"conditional-access/policies/{created.id}")
    check(status == 200 and seen["conditions"]["users"]["includeGroups"] == [SALES], "the admin API reads the policy the SDK made (one store)", seen)
    config = RequestConfiguration(query_parameters=PoliciesRequestBuilder.PoliciesRequestBuilderGetQueryParameters(select=["displayName", "state"]))
    selected = await client.identity.conditional_access.policies.by_conditional_access_policy_id(created.id).get(request_configuration=config)
    check(selected.display_name == policy.display_name and selected.conditions is None, "$select returns the selected members (and id)")
    await client.identity.conditional_access.policies.by_conditional_access_policy_id(created.id).patch(
        ConditionalAccessPolicy(state=ConditionalAccessPolicyState.Disabled)
    )
    status, seen = admin.get(f"conditional-access/policies/{created.id}")
    check(seen["state"] == "disabled" and seen["conditions"]["users"]["includeGroups"] == [SALES], "PATCH (no If-Match) changes only the state", seen)
    status, audit = admin.get("audit?top=20")
    check(
        any(r["documentId"] == created.id and GRAPH_TOOLS in r["actor"] for r in audit["value"]),
        "the audit log records the Graph writes with the app as actor",
    )

    print("evolvable enums")
    linux = ConditionalAccessPolicy(
        display_name="Graph SDK: linux platform",
        state=ConditionalAccessPolicyState.Disabled,
        conditions=ConditionalAccessConditionSet(
            users=ConditionalAccessUsers(include_users=["All"]),
            applications=ConditionalAccessApplications(include_applications=["All"]),
            client_app_types=[ConditionalAccessClientApp.All],
            platforms=ConditionalAccessPlatforms(include_platforms=[ConditionalAccessDevicePlatform.Linux]),
        ),
        grant_controls=ConditionalAccessGrantControls(operator="OR", built_in_controls=[ConditionalAccessGrantControl.Block]),
    )
    late = RequestConfiguration()
    late.headers.add("Prefer", "include-unknown-enum-members")
    made = await client.identity.conditional_access.policies.post(linux, request_configuration=late)
    plain = await client.identity.conditional_access.policies.by_conditional_access_policy_id(made.id).get()
    check(plain.conditions.platforms.include_platforms == [ConditionalAccessDevicePlatform.UnknownFutureValue], "without Prefer, linux reads unknownFutureValue")
    asked = await client.identity.conditional_access.policies.by_conditional_access_policy_id(made.id).get(request_configuration=late)
    check(asked.conditions.platforms.include_platforms == [ConditionalAccessDevicePlatform.Linux], "with Prefer: include-unknown-enum-members, linux")
    for policy_id in [made.id, created.id]:
        await client.identity.conditional_access.policies.by_conditional_access_policy_id(policy_id).delete()
    status, _ = admin.get(f"conditional-access/policies/{created.id}")
    check(status == 404, "DELETE (no If-Match) removes the policy", status)

    print("named locations paged with PageIterator")
    for index in range(3):
        await client.identity.conditional_access.named_locations.post(
            IpNamedLocation(odata_type="#microsoft.graph.ipNamedLocation", display_name=f"Branch {index}", is_trusted=False,
                            ip_ranges=[IPv4CidrRange(odata_type="#microsoft.graph.iPv4CidrRange", cidr_address=f"198.51.100.{index * 16}/28")])
        )
    from msgraph.generated.identity.conditional_access.named_locations.named_locations_request_builder import NamedLocationsRequestBuilder

    page_config = RequestConfiguration(query_parameters=NamedLocationsRequestBuilder.NamedLocationsRequestBuilderGetQueryParameters(top=2))
    page = await client.identity.conditional_access.named_locations.get(request_configuration=page_config)
    check(page.odata_next_link and page.odata_next_link.startswith(f"{base}/v1.0/"), "a page has an absolute @odata.nextLink", page.odata_next_link)
    names = []
    iterator = PageIterator(page, adapter)
    await iterator.iterate(lambda item: names.append(item.display_name) or True)
    status, stored = admin.get("named-locations")
    check(sorted(names) == sorted(l["displayName"] for l in stored["value"]), "PageIterator visits every named location once", names)
    check(all(isinstance(r, IPv4CidrRange) for l in page.value for r in (l.ip_ranges or []) if r.cidr_address and ":" not in r.cidr_address), "IP ranges read as iPv4CidrRange")

    print("users, groups, roles, licences")
    query = UsersRequestBuilder.UsersRequestBuilderGetQueryParameters(
        filter="startswith(displayName,'A') or userPrincipalName eq 'carol@contoso.example'", select=["id", "displayName"], top=1, count=True
    )
    users_config = RequestConfiguration(query_parameters=query)
    users_config.headers.add("ConsistencyLevel", "eventual")
    users = await client.users.get(request_configuration=users_config)
    check(users.odata_count == 2 and len(users.value) == 1 and users.odata_next_link, "users: $filter, $select, $top, $count with ConsistencyLevel", users.odata_count)
    check(users.value[0].user_principal_name is None and users.value[0].display_name, "$select leaves the other members out")
    no_header = RequestConfiguration(query_parameters=UsersRequestBuilder.UsersRequestBuilderGetQueryParameters(count=True))
    await expect_odata_error(client.users.get(request_configuration=no_header), 400, "Request_BadRequest", "$count without ConsistencyLevel is refused as in Graph")
    by_name = await client.users.by_user_id("alice@contoso.example").get()
    check(by_name.id == ALICE, "a user read by UPN, as Graph allows", by_name.id)
    from msgraph.generated.groups.groups_request_builder import GroupsRequestBuilder

    expanded = await client.groups.get(request_configuration=RequestConfiguration(
        query_parameters=GroupsRequestBuilder.GroupsRequestBuilderGetQueryParameters(expand=["members"], filter=f"id eq '{SALES}'")))
    check(len(expanded.value) == 1 and sorted(m.id for m in expanded.value[0].members) == sorted([ALICE, "1d8f4b2a-6c8e-4f3b-9d7a-2e4c6b8f0a02"]),
          "groups with $expand=members and $filter on id")
    members = await client.groups.by_group_id(SALES).members.get()
    check(sorted(m.id for m in members.value) == sorted([ALICE, "1d8f4b2a-6c8e-4f3b-9d7a-2e4c6b8f0a02"]), "group members", [m.id for m in members.value])
    await client.groups.by_group_id(SALES).members.ref.post(ReferenceCreate(odata_id=f"{base}/v1.0/directoryObjects/{CAROL}"))
    status, group = admin.get(f"groups/{SALES}")
    check(CAROL in group["members"], "a member added by reference is in the group", group)
    await client.groups.by_group_id(SALES).members.by_directory_object_id(CAROL).ref.delete()
    status, group = admin.get(f"groups/{SALES}")
    check(CAROL not in group["members"], "a member removed by reference is gone", group)
    from msgraph.generated.models.invitation import Invitation

    invited = await client.invitations.post(Invitation(
        invited_user_email_address="frank@fabrikam.example", invite_redirect_url="https://myapps.microsoft.com", send_invitation_message=False))
    status, guest = admin.get(f"users/{invited.invited_user.id}") if invited and invited.invited_user else (0, None)
    check(invited.status == "Completed" and status == 200 and guest.get("userType") == "Guest",
          "an invitation through Graph makes the B2B guest (the users' write path)", [invited.status if invited else None, guest])
    definitions = await client.role_management.directory.role_definitions.get()
    check(any(d.display_name == "Conditional Access Administrator" and d.is_built_in for d in definitions.value), "role definitions", len(definitions.value))
    skus = await client.subscribed_skus.get()
    plans = {p.service_plan_name for s in skus.value for p in s.service_plans}
    check({"AAD_PREMIUM", "AAD_PREMIUM_P2"} <= plans, "subscribedSkus carries Entra ID P1 and P2's service plans", plans)
    organization = await client.organization.get()
    check(organization.value[0].id == TENANT and organization.value[0].verified_domains[0].name == "contoso.example", "organization")

    print("Intune's shapes")
    ios = await client.device_app_management.ios_managed_app_protections.get()
    android = await client.device_app_management.android_managed_app_protections.get()
    status, protections = admin.get("app-protection/policies")
    names = sorted(p["displayName"] for p in protections["value"])
    check(sorted(p.display_name for p in ios.value) == names and sorted(p.display_name for p in android.value) == names,
          "every app protection policy reads as an iOS and an Android managed app protection", names)
    first_ios = ios.value[0]
    stored = next(p for p in protections["value"] if p["id"] == first_ios.id)
    check(first_ios.pin_required == stored["settings"].get("pinRequired", False)
          and first_ios.minimum_required_os_version == stored["settings"].get("minimumOsVersion")
          and first_ios.period_offline_before_access_check is not None
          and first_ios.allowed_data_storage_locations and None not in first_ios.allowed_data_storage_locations,
          "its settings in Intune's names and values (pin, minimum OS, offline period, storage locations)", first_ios.allowed_data_storage_locations)
    apps = await client.device_app_management.ios_managed_app_protections.by_ios_managed_app_protection_id(first_ios.id).apps.get()
    check(any(a.mobile_app_identifier.bundle_id == "com.contoso.mail" for a in apps.value), "its apps by bundle ID (from the MSAL redirect URI)",
          [a.mobile_app_identifier.bundle_id for a in apps.value])
    # Alice's mail app enrolls (the compliance API, as the Intune SDK would), and Intune's list shows it.
    compliance = requests.post(
        f"{base}/{TENANT}/oauth2/v2.0/token",
        data={"grant_type": "password", "client_id": "c0ffee00-1111-4a2b-8c3d-4e5f6a7b8c01", "username": "alice@contoso.example",
              "password": "Alice-dev-pass1", "scope": "api://portcullis-compliance/.default"},
    ).json()["access_token"]
    enrolled = requests.post(f"{base}/mam/v1/remediations", headers={"Authorization": f"Bearer {compliance}"},
                             json={"deviceId": "graph-interop-phone", "platform": "iOS", "osVersion": "17.4", "appVersion": "3.1", "silent": True})
    check(enrolled.status_code in (200, 201), "Alice's app enrolled", [enrolled.status_code, enrolled.text[:300]])
    registrations = await client.device_app_management.managed_app_registrations.get()
    status, enrollments = admin.get("enrollments")
    mine = [r for r in registrations.value if r.device_tag == "graph-interop-phone"]
    check(len(registrations.value) == len(enrollments["value"]) >= 1 and len(mine) == 1 and mine[0].user_id == ALICE
          and mine[0].platform_version == "17.4" and mine[0].app_identifier.bundle_id == "com.contoso.mail",
          "managedAppRegistrations: an enrollment each, in Intune's names", [(r.device_tag, r.platform_version) for r in registrations.value])

    print("errors")
    await expect_odata_error(
        client.identity.conditional_access.policies.by_conditional_access_policy_id("00000000-0000-4000-8000-000000000000").get(),
        404, "Request_ResourceNotFound", "an unknown ID is an ODataError 404 Request_ResourceNotFound",
    )
    status, assignments = admin.get("app-role-assignments")
    writer = next(a for a in assignments["value"] if a["principalId"] == GRAPH_TOOLS and a["role"] == "Policy.ReadWrite.ConditionalAccess")
    status, _ = admin.send("DELETE", f"app-role-assignments/{writer['id']}", headers={"If-Match": "*"})
    check(status == 204, "the app's Policy.ReadWrite.ConditionalAccess unassigned", status)
    await expect_odata_error(
        client.identity.conditional_access.policies.post(policy), 403, "Authorization_RequestDenied",
        "a write without Policy.ReadWrite.ConditionalAccess (still in the token) is an ODataError 403",
    )
    restored = {k: v for k, v in writer.items() if k in ("principalId", "resource", "role")}
    status, _ = admin.send("POST", "app-role-assignments", restored)
    check(status == 201, "the assignment restored", status)

    print("$batch")
    from msgraph_core.requests.batch_request_content import BatchRequestContent
    from msgraph_core.requests.batch_request_item import BatchRequestItem

    batch = BatchRequestContent()
    batch.add_request("alice", BatchRequestItem(request_information=client.users.by_user_id(ALICE).to_get_request_information(), id="alice"))
    batch.add_request("sales", BatchRequestItem(request_information=client.groups.by_group_id(SALES).to_get_request_information(), id="sales"))
    batch.add_request(
        "missing",
        BatchRequestItem(
            request_information=client.identity.conditional_access.policies.by_conditional_access_policy_id("00000000-0000-4000-8000-000000000000").to_get_request_information(),
            id="missing",
        )
    )
    answered = await client.batch.post(batch)
    statuses = answered.get_response_status_codes()
    check(statuses == {"alice": 200, "sales": 200, "missing": 404}, "$batch answers each request", statuses)

    print("what-if (beta identity/conditionalAccess/evaluate)")
    await what_if(base)

    print("the corpus through the SDK's typed models (beta)")
    await corpus_round_trip(base, corpus, admin)

    print("identity protection: risky users, dismiss, confirmCompromised, detections, history")
    await identity_protection(client, admin)

    print("continuous access evaluation: a revoked token, the challenge, the SDK's retry")
    token = credential.get_token(f"{GRAPH}/.default", enable_cae=True).token
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    check("cp1" in [c.lower() for c in claims.get("xms_cc", [])], "the SDK's token is CAE-capable (xms_cc cp1)", claims.get("xms_cc"))
    revoked = requests.post(
        f"{base}/{TENANT}/oauth2/v2.0/revoke",
        data={"token": token, "token_type_hint": "access_token", "client_id": GRAPH_TOOLS, "client_secret": GRAPH_TOOLS_SECRET},
    )
    check(revoked.status_code == 200, "the token revoked (RFC 7009)", revoked.status_code)
    raw = requests.get(f"{base}/v1.0/organization", headers={"Authorization": f"Bearer {token}"})
    challenge = raw.headers.get("WWW-Authenticate", "")
    check(raw.status_code == 401 and 'error="insufficient_claims"' in challenge and "claims=" in challenge, "a revoked token is challenged for claims", challenge)
    again = await client.organization.get()
    check(again.value[0].id == TENANT, "the SDK retried with a new token after the challenge")


async def identity_protection(client, admin):
    from msgraph.generated.identity_protection.risky_users.confirm_compromised.confirm_compromised_post_request_body import (
        ConfirmCompromisedPostRequestBody,
    )
    from msgraph.generated.identity_protection.risky_users.dismiss.dismiss_post_request_body import DismissPostRequestBody
    from msgraph.generated.models.risk_level import RiskLevel
    from msgraph.generated.models.risk_state import RiskState

    status, reported = admin.send("POST", "identityProtection/riskDetections", {"userId": CAROL, "riskEventType": "leakedCredentials"})
    check(status == 201, "leaked credentials reported for Carol (admin API)", reported)
    risky = await client.identity_protection.risky_users.get()
    carol = next((u for u in risky.value if u.id == CAROL), None)
    check(carol is not None and carol.risk_level == RiskLevel.High and carol.risk_state == RiskState.AtRisk,
          "riskyUsers lists Carol at high risk, at risk (typed model)", carol and (carol.risk_level, carol.risk_state))
    await client.identity_protection.risky_users.dismiss.post(DismissPostRequestBody(user_ids=[CAROL]))
    carol = await client.identity_protection.risky_users.by_risky_user_id(CAROL).get()
    check(carol.risk_state == RiskState.Dismissed and carol.risk_level == RiskLevel.None_, "dismiss: her risk dismissed", (carol.risk_state, carol.risk_level))
    await client.identity_protection.risky_users.confirm_compromised.post(ConfirmCompromisedPostRequestBody(user_ids=[CAROL]))
    carol = await client.identity_protection.risky_users.by_risky_user_id(CAROL).get()
    check(carol.risk_state == RiskState.ConfirmedCompromised and carol.risk_level == RiskLevel.High,
          "confirmCompromised: confirmed compromised, high", (carol.risk_state, carol.risk_level))
    history = await client.identity_protection.risky_users.by_risky_user_id(CAROL).history.get()
    check([h.risk_state for h in history.value] == [RiskState.ConfirmedCompromised, RiskState.Dismissed, RiskState.AtRisk],
          "her history, newest first", [h.risk_state for h in history.value])
    detections = await client.identity_protection.risk_detections.get()
    mine = sorted(d.risk_event_type for d in detections.value if d.user_id == CAROL)
    check(mine == ["adminConfirmedUserCompromised", "leakedCredentials"], "riskDetections: the report and the admin's confirmation", mine)
    await expect_odata_error(
        client.identity_protection.risky_users.dismiss.post(DismissPostRequestBody(user_ids=["00000000-0000-4000-8000-00000000dead"])), 400,
        "BadRequest", "dismiss of a user who does not exist is a 400")


async def what_if(base):
    """Graph's what-if through the beta SDK: Alice on iOS to the mail API meets the app-protection policy; on Windows the
    policy does not apply, for its platform condition. Decided as the token endpoint decides (the admin API's what-if)."""
    from msgraph_beta.generated.identity.conditional_access.evaluate.evaluate_post_request_body import EvaluatePostRequestBody
    from msgraph_beta.generated.models.application_context import ApplicationContext
    from msgraph_beta.generated.models.conditional_access_client_app import ConditionalAccessClientApp
    from msgraph_beta.generated.models.conditional_access_device_platform import ConditionalAccessDevicePlatform
    from msgraph_beta.generated.models.sign_in_conditions import SignInConditions
    from msgraph_beta.generated.models.user_sign_in import UserSignIn

    client, _, _ = sdk_client(base, beta=True)
    protection = "Require app protection for the mail API on every platform but desktops (no or an unknown platform included)"
    answers = {}
    for platform in (ConditionalAccessDevicePlatform.IOS, ConditionalAccessDevicePlatform.Windows):
        body = EvaluatePostRequestBody(
            sign_in_identity=UserSignIn(odata_type="#microsoft.graph.userSignIn", user_id=ALICE),
            sign_in_context=ApplicationContext(odata_type="#microsoft.graph.applicationContext", include_applications=[MAIL_API]),
            sign_in_conditions=SignInConditions(device_platform=platform, client_app_type=ConditionalAccessClientApp.MobileAppsAndDesktopClients),
            applied_policies_only=False,
        )
        result = await client.identity.conditional_access.evaluate.post(body)
        answers[platform] = {r.display_name: r for r in result.value}
    ios, windows = answers[ConditionalAccessDevicePlatform.IOS].get(protection), answers[ConditionalAccessDevicePlatform.Windows].get(protection)
    check(ios is not None and ios.policy_applies, "what-if: on iOS the app-protection policy applies", ios and ios.analysis_reasons)
    check(windows is not None and not windows.policy_applies and "devicePlatform" in [r.value for r in (windows.analysis_reasons or [])],
          "what-if: on Windows it does not, for its platform", windows and windows.analysis_reasons)


def comparable(value):
    """A policy's meaning: members Graph fills in (null, [], read-only dates) dropped, lists as sets, a strength by its ID
    (what a policy holds; the rest is its expansion)."""
    if isinstance(value, dict):
        out = {}
        for key, member in value.items():
            if key == "authenticationStrength" and isinstance(member, dict):
                out[key] = member.get("id")
                continue
            if key.startswith("@odata") or key in ("id", "createdDateTime", "modifiedDateTime", "templateId", "deletedDateTime"):
                continue
            member = comparable(member)
            if member in (None, [], {}):
                continue
            out[key] = member
        return out
    if isinstance(value, list):
        return sorted((comparable(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    return value


MAIL_API = "c0ffee00-4444-4a2b-8c3d-4e5f6a7b8c04"
HQ = "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a81"
GUID = __import__("re").compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def mapped(policy):
    """Another directory's object IDs mapped to this one's (what `--map` does): users to Alice, groups to Sales,
    applications to the mail API, named locations to Contoso HQ; role template IDs and keywords stay."""
    targets = {
        ("users", "includeUsers"): ALICE, ("users", "excludeUsers"): ALICE, ("users", "includeGroups"): SALES,
        ("users", "excludeGroups"): SALES, ("applications", "includeApplications"): MAIL_API,
        ("applications", "excludeApplications"): MAIL_API, ("locations", "includeLocations"): HQ, ("locations", "excludeLocations"): HQ,
    }
    strength = (policy.get("grantControls") or {}).get("authenticationStrength")
    if isinstance(strength, dict):
        # A policy holds its strength's ID; an export's expansion of it is not part of the policy (PROTOCOL §17).
        policy["grantControls"]["authenticationStrength"] = {"id": strength.get("id")}
    conditions = policy.get("conditions") or {}
    for (section, key), target in targets.items():
        values = (conditions.get(section) or {}).get(key)
        if isinstance(values, list):
            conditions[section][key] = list(dict.fromkeys(target if isinstance(v, str) and GUID.match(v) else v for v in values))
    return policy


async def corpus_round_trip(base, corpus, admin):
    """Each corpus policy the admin API accepts as it is (a dry run) goes through the beta SDK's typed model — parsed,
    serialised, created with Prefer: include-unknown-enum-members — and reads back with the same meaning."""
    from kiota_abstractions.base_request_configuration import RequestConfiguration
    from kiota_serialization_json.json_parse_node import JsonParseNode
    from kiota_serialization_json.json_serialization_writer import JsonSerializationWriter
    from msgraph_beta.generated.models.conditional_access_policy import ConditionalAccessPolicy
    from msgraph_beta.generated.models.o_data_errors.o_data_error import ODataError

    client, _, credential = sdk_client(base, beta=True)
    prefer = RequestConfiguration()
    prefer.headers.add("Prefer", "include-unknown-enum-members")
    files = []
    for folder, _, names in os.walk(corpus):
        files += [os.path.join(folder, n) for n in names if n.endswith(".json")]
    accepted = tried = 0
    sdk_limited = []
    for path in sorted(files):
        try:
            document = json.load(open(path))
        except (ValueError, UnicodeDecodeError):
            continue
        for policy in document.get("value", [document]) if isinstance(document, dict) else []:
            if not isinstance(policy, dict) or "conditions" not in policy:
                continue
            tried += 1
            policy = mapped({k: v for k, v in policy.items() if k != "id"})
            policy["state"] = "disabled"
            status, dry = admin.send("POST", "conditional-access/policies?dryRun=true", policy)
            if status != 200:
                continue
            accepted += 1
            model = JsonParseNode(json.loads(json.dumps(policy))).get_object_value(ConditionalAccessPolicy)
            # kiota's JSON writer (1.16) writes no flags enumeration (`transferMethods`, `guestOrExternalUserTypes`: a
            # comma-joined value): a policy holding one cannot leave the SDK whole, whatever the server. Said, not sent.
            own = JsonSerializationWriter()
            own.write_object_value(None, model)
            lost = losses(policy, json.loads(own.get_serialized_content()))
            if lost:
                flags = {"transferMethods", "guestOrExternalUserTypes"}
                if not check(all(path.rsplit("/", 1)[-1] in flags for path in lost), f"{os.path.relpath(path, corpus)}: the SDK loses only flags", lost):
                    continue
                sdk_limited.append(os.path.relpath(path, corpus))
                # The same policy as JSON through Graph (the server keeps flags whole), read back through Graph.
                token = credential.get_token(f"{GRAPH}/.default").token
                headers = {"Authorization": f"Bearer {token}", "Prefer": "include-unknown-enum-members"}
                made = requests.post(f"{base}/beta/identity/conditionalAccess/policies", json=policy, headers=headers)
                if check(made.status_code == 201, f"{os.path.relpath(path, corpus)}: created as JSON through Graph", made.text[:300]):
                    url = f"{base}/beta/identity/conditionalAccess/policies/{made.json()['id']}"
                    back = requests.get(url, headers=headers).json()
                    check(comparable(back) == comparable(dry["after"]), f"{os.path.relpath(path, corpus)}: as JSON, the round trip keeps the meaning")
                    requests.delete(url, headers=headers)
                continue
            try:
                made = await client.identity.conditional_access.policies.post(model, request_configuration=prefer)
            except ODataError as error:
                sent = JsonSerializationWriter()
                sent.write_object_value(None, model)
                details = [(d.target, d.message) for d in (error.error.details or [])] if error.error else None
                check(False, f"{os.path.relpath(path, corpus)}: the SDK's model of it is accepted", [details, sent.get_serialized_content()[:2000]])
                continue
            read = await client.identity.conditional_access.policies.by_conditional_access_policy_id(made.id).get(request_configuration=prefer)
            writer = JsonSerializationWriter()
            writer.write_object_value(None, read)
            back = json.loads(writer.get_serialized_content())
            status, stored = admin.get(f"conditional-access/policies/{made.id}")
            same = comparable(back) == comparable(stored) and comparable(stored) == comparable(dry["after"])
            if not check(same, f"{os.path.relpath(path, corpus)}: round trip keeps the meaning"):
                print(json.dumps({"sdk": comparable(back), "stored": comparable(stored), "dry run": comparable(dry["after"])}, indent=1)[:3000])
            await client.identity.conditional_access.policies.by_conditional_access_policy_id(made.id).delete()
    print(f"  --  {len(sdk_limited)} accepted policies hold a flags enumeration the SDK cannot write: {sdk_limited}")
    check(accepted - len(sdk_limited) >= 19, f"corpus: {accepted - len(sdk_limited)} of {accepted} accepted (of {tried}) round-tripped through the SDK", accepted)


def losses(given, written, path=""):
    """The members of `given` with a value that `written` does not carry."""
    if isinstance(given, dict):
        found = []
        for key, member in given.items():
            if key.startswith("@") or key.startswith("#") or member in (None, [], {}, ""):
                continue
            found += losses(member, written.get(key) if isinstance(written, dict) else None, f"{path}/{key}")
        return found
    return [path] if written in (None, [], {}, "") else []


async def phase_unmodified():
    from azure.identity import ClientSecretCredential
    from msgraph import GraphServiceClient

    print("an unmodified client: no authority, no base URL")
    credential = ClientSecretCredential(TENANT, GRAPH_TOOLS, GRAPH_TOOLS_SECRET)
    client = GraphServiceClient(credentials=credential, scopes=[f"{GRAPH}/.default"])
    policies = await client.identity.conditional_access.policies.get()
    admin = Admin("https://login.microsoftonline.com")
    status, stored = admin.get("conditional-access/policies")
    check(
        sorted(p.display_name for p in policies.value) == sorted(p["displayName"] for p in stored["value"]),
        "graph.microsoft.com answers the policies, the token from login.microsoftonline.com",
    )
    token = credential.get_token(f"{GRAPH}/.default").token
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    check(claims["iss"] == f"https://login.microsoftonline.com/{TENANT}/v2.0" and claims["aud"] in (GRAPH, "00000003-0000-0000-c000-000000000000"), "the token's issuer and audience are Entra's names", claims)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--phase", choices=["sdk", "unmodified"], required=True)
    parser.add_argument("--base-url", default="https://localhost")
    parser.add_argument("--corpus", default=os.path.join(os.path.dirname(__file__), "../../../shared/ca-corpus"))
    args = parser.parse_args()
    try:
        if args.phase == "sdk":
            asyncio.run(phase_sdk(args.base_url, args.corpus))
        else:
            asyncio.run(phase_unmodified())
    except Exception:  # noqa: BLE001 - report and fail
        traceback.print_exc()
        failures.append("an exception")
    if failures:
        print(f"graph interop: {len(failures)} FAILED: {failures}")
        sys.exit(1)
    print("graph interop: all passed")


if __name__ == "__main__":
    main()
