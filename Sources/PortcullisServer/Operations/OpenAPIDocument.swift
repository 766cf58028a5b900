/// The OpenAPI 3.1 description of every endpoint, served at `GET /openapi.json` (kept true by OpenAPITests
/// and by schemathesis in CI).
enum OpenAPIDocument {
    static let json = #"""
    {
      "openapi": "3.1.0",
      "info": {
        "title": "Portcullis",
        "version": "1.0.0",
        "summary": "Conditional-access token broker (Microsoft identity platform v2.0 dialect) with an app-protection compliance service.",
        "description": "Every response carries `client-request-id` (correlation ID) and `x-ms-request-id` (trace ID). OAuth routes answer the Microsoft-shaped error body; `/admin/v1` and `/mam/v1` answer `{\"error\":{code,message,details?,correlationId}}`; an unmapped failure is `{error, error_description, correlation_id, trace_id}` (500 `server_error`, 503 `temporarily_unavailable` with `Retry-After`)."
      },
      "servers": [
        {
          "url": "/"
        }
      ],
      "tags": [
        {
          "name": "OAuth"
        },
        {
          "name": "Conditional access"
        },
        {
          "name": "App protection"
        },
        {
          "name": "App configuration",
          "description": "Managed app configuration (PROTOCOL §8): policies, and delivery to compliant app instances."
        },
        {
          "name": "Audit"
        },
        {
          "name": "Compliance"
        },
        {
          "name": "Operations"
        },
        {
          "name": "Directory",
          "description": "Users' authentication methods (PROTOCOL §10); the rest of the directory API comes with PROTOCOL §11."
        },
        {
          "name": "Console",
          "description": "The admin console's pages (GET /admin): server-rendered HTML over the admin API, for a signed-in administrator (a sealed session cookie); every form carries a CSRF token."
        }
      ],
      "paths": {
        "/{tenant}/v2.0/.well-known/openid-configuration": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/Tenant"
            }
          ],
          "get": {
            "operationId": "getOpenIDConfiguration",
            "tags": [
              "OAuth"
            ],
            "summary": "OpenID Connect discovery",
            "security": [],
            "responses": {
              "200": {
                "$ref": "#/components/responses/Metadata"
              },
              "400": {
                "$ref": "#/components/responses/OAuthBadRequest"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/.well-known/oauth-authorization-server/{tenant}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/Tenant"
            }
          ],
          "get": {
            "operationId": "getAuthorizationServerMetadata",
            "tags": [
              "OAuth"
            ],
            "summary": "RFC 8414 authorization server metadata (same content)",
            "security": [],
            "responses": {
              "200": {
                "$ref": "#/components/responses/Metadata"
              },
              "400": {
                "$ref": "#/components/responses/OAuthBadRequest"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/{tenant}/discovery/v2.0/keys": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/Tenant"
            }
          ],
          "get": {
            "operationId": "getKeys",
            "tags": [
              "OAuth"
            ],
            "security": [],
            "summary": "JWKS: every key that may have signed a live token",
            "responses": {
              "200": {
                "description": "The key set.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Cache-Control": {
                    "$ref": "#/components/headers/PublicCache"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/JSONWebKeySet"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/OAuthBadRequest"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/{tenant}/oauth2/v2.0/token": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/Tenant"
            }
          ],
          "post": {
            "operationId": "token",
            "tags": [
              "OAuth"
            ],
            "security": [
              {
                "clientBasic": []
              },
              {}
            ],
            "summary": "Token endpoint: client_credentials, password, refresh_token, authorization_code, device_code",
            "description": "Client authentication: `client_secret_basic` (HTTP Basic), `client_secret_post`, or `client_id` alone for public clients. Refusals use AADSTS numbers; the password grant answers 50053 when the account or the client IP is locked out.",
            "parameters": [
              {
                "name": "x-client-SKU",
                "in": "header",
                "required": false,
                "schema": {
                  "type": "string"
                },
                "description": "MSAL SKU (platform detection)."
              },
              {
                "name": "x-client-OS",
                "in": "header",
                "required": false,
                "schema": {
                  "type": "string"
                },
                "description": "Client OS (platform detection)."
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "$ref": "#/components/schemas/TokenRequest"
                  },
                  "examples": {
                    "clientCredentials": {
                      "summary": "An app-only token (client_secret_basic carries the client)",
                      "value": {
                        "grant_type": "client_credentials",
                        "scope": "api://contoso-mail/.default"
                      }
                    }
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "Tokens.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Cache-Control": {
                    "$ref": "#/components/headers/NoStore"
                  },
                  "Pragma": {
                    "$ref": "#/components/headers/PragmaNoCache"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/TokenResponse"
                    }
                  }
                }
              },
              "400": {
                "description": "OAuth error, including conditional-access refusals (53003, 53002, 53005, 53009, 50076) and lock-out (50053).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Cache-Control": {
                    "$ref": "#/components/headers/NoStore"
                  },
                  "Pragma": {
                    "$ref": "#/components/headers/PragmaNoCache"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/OAuthError"
                    },
                    "examples": {
                      "badCredentials": {
                        "summary": "Wrong password",
                        "value": {
                          "error": "invalid_grant",
                          "error_codes": [
                            50126
                          ],
                          "timestamp": "2026-11-21 23:04:00Z",
                          "trace_id": "0b6c",
                          "correlation_id": "8f2e",
                          "error_description": "AADSTS50126: Error validating credentials due to invalid username or password.\r\nTrace ID: 0b6c\r\nCorrelation ID: 8f2e\r\nTimestamp: 2026-11-21 23:04:00Z"
                        }
                      },
                      "locked": {
                        "summary": "Account locked or too many attempts from this IP",
                        "value": {
                          "error": "invalid_grant",
                          "error_codes": [
                            50053
                          ],
                          "timestamp": "2026-11-21 23:04:00Z",
                          "trace_id": "0b6c",
                          "correlation_id": "8f2e",
                          "error_description": "AADSTS50053: The account is locked because of too many sign-in attempts.\r\nTrace ID: 0b6c\r\nCorrelation ID: 8f2e\r\nTimestamp: 2026-11-21 23:04:00Z"
                        }
                      },
                      "protectionPolicyRequired": {
                        "summary": "App protection required (53005)",
                        "value": {
                          "error": "unauthorized_client",
                          "suberror": "protection_policy_required",
                          "error_codes": [
                            53005
                          ],
                          "timestamp": "2026-11-21 23:04:00Z",
                          "trace_id": "0b6c",
                          "correlation_id": "8f2e",
                          "error_description": "AADSTS53005: Application needs to enforce Intune protection policies.\r\nTrace ID: 0b6c\r\nCorrelation ID: 8f2e\r\nTimestamp: 2026-11-21 23:04:00Z",
                          "adi": "alice@contoso.example",
                          "client_info": "eyJ1aWQiOiI",
                          "remediation": {
                            "home_account_id": "oid.tid",
                            "account_id": "oid",
                            "tenant_id": "tid",
                            "upn": "alice@contoso.example",
                            "endpoint": "https://login.contoso.example/mam/v1/remediations",
                            "scope": "api://portcullis-compliance/.default",
                            "policy_ids": [
                              "b3f1"
                            ]
                          }
                        }
                      }
                    }
                  }
                }
              },
              "401": {
                "$ref": "#/components/responses/OAuthInvalidClient"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/OAuthUnavailable"
              }
            }
          }
        },
        "/{tenant}/oauth2/v2.0/revoke": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/Tenant"
            }
          ],
          "post": {
            "operationId": "revoke",
            "tags": [
              "OAuth"
            ],
            "security": [
              {
                "clientBasic": []
              },
              {}
            ],
            "summary": "RFC 7009 revocation",
            "description": "A refresh token revokes its whole family; an access token is revoked by `jti`. 200 whether or not the token was known.",
            "requestBody": {
              "$ref": "#/components/requestBodies/TokenHintForm"
            },
            "responses": {
              "200": {
                "description": "Revoked, or nothing to revoke (empty body).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Cache-Control": {
                    "$ref": "#/components/headers/NoStore"
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/OAuthBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/OAuthInvalidClient"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/OAuthUnavailable"
              }
            }
          }
        },
        "/{tenant}/oauth2/v2.0/introspect": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/Tenant"
            }
          ],
          "post": {
            "operationId": "introspect",
            "tags": [
              "OAuth"
            ],
            "security": [
              {
                "clientBasic": []
              },
              {}
            ],
            "summary": "RFC 7662 introspection (confidential clients only)",
            "description": "Only the token's resource or the client it was issued to learns about it; anything else is inactive.",
            "requestBody": {
              "$ref": "#/components/requestBodies/TokenHintForm"
            },
            "responses": {
              "200": {
                "description": "The token's state.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Cache-Control": {
                    "$ref": "#/components/headers/NoStore"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/IntrospectionResponse"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/OAuthBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/OAuthInvalidClient"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/OAuthUnavailable"
              }
            }
          }
        },
        "/{tenant}/oauth2/v2.0/authorize": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/Tenant"
            }
          ],
          "get": {
            "operationId": "authorize",
            "tags": [
              "OAuth"
            ],
            "security": [],
            "summary": "Authorization endpoint: authorization code + PKCE, the sign-in page, SSO (PROTOCOL §9.1)",
            "description": "Answers the sign-in page (200), the account picker (`prompt=select_account` with a session), a redirect with a code (a live session), a redirect with an error (e.g. `login_required` for `prompt=none`), a `form_post` page (200), or an error page (400; 403 for a conditional-access block, AADSTS53003).",
            "parameters": [
              {
                "name": "response_type",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string",
                  "enum": [
                    "code"
                  ]
                }
              },
              {
                "name": "client_id",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "redirect_uri",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "scope",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "state",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "nonce",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "code_challenge",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "code_challenge_method",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string",
                  "enum": [
                    "S256"
                  ]
                }
              },
              {
                "name": "response_mode",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string",
                  "enum": [
                    "query",
                    "fragment",
                    "form_post"
                  ]
                }
              },
              {
                "name": "prompt",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string",
                  "enum": [
                    "login",
                    "none",
                    "select_account",
                    "consent"
                  ]
                }
              },
              {
                "name": "login_hint",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "domain_hint",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "claims",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "x-client-SKU",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "x-client-OS",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "x-client-Ver",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              }
            ],
            "responses": {
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              },
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "302": {
                "$ref": "#/components/responses/Redirect"
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              }
            }
          },
          "post": {
            "operationId": "authorizePost",
            "tags": [
              "OAuth"
            ],
            "security": [],
            "summary": "Authorization endpoint, parameters in a form body",
            "requestBody": {
              "required": true,
              "content": {
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "$ref": "#/components/schemas/AuthorizationRequest"
                  }
                }
              }
            },
            "responses": {
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              },
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "302": {
                "$ref": "#/components/responses/Redirect"
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              }
            }
          }
        },
        "/common/userrealm/{username}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "getUserRealm",
            "tags": [
              "OAuth"
            ],
            "security": [],
            "summary": "User-realm discovery (MSAL's password grant asks first)",
            "parameters": [
              {
                "name": "username",
                "in": "path",
                "required": true,
                "schema": {
                  "type": "string"
                },
                "description": "A UPN; its domain is looked up."
              },
              {
                "name": "api-version",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                },
                "description": "`1.0` (ignored)."
              }
            ],
            "responses": {
              "200": {
                "description": "`Managed` for a known tenant domain, `Unknown` otherwise.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/UserRealm"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/MalformedRequest"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/health/live": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "getLiveness",
            "tags": [
              "Operations"
            ],
            "security": [],
            "summary": "Liveness",
            "responses": {
              "200": {
                "description": "The process answers.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Liveness"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/MalformedRequest"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/health/ready": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "getReadiness",
            "tags": [
              "Operations"
            ],
            "security": [],
            "summary": "Readiness: the store answers and the signing keys are loaded",
            "responses": {
              "200": {
                "description": "Ready.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Readiness"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/MalformedRequest"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "description": "Not ready: the store is unreachable or the signing keys are missing.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Retry-After": {
                    "description": "Seconds to wait before retrying.",
                    "required": false,
                    "schema": {
                      "type": "integer",
                      "minimum": 0
                    }
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "anyOf": [
                        {
                          "$ref": "#/components/schemas/Readiness"
                        },
                        {
                          "$ref": "#/components/schemas/ServerUnavailable"
                        }
                      ]
                    }
                  }
                }
              }
            }
          }
        },
        "/metrics": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "getMetrics",
            "tags": [
              "Operations"
            ],
            "security": [],
            "summary": "Prometheus text exposition",
            "responses": {
              "200": {
                "description": "Metrics.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "text/plain": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/MalformedRequest"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/openapi.json": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "getOpenAPIDocument",
            "tags": [
              "Operations"
            ],
            "security": [],
            "summary": "This OpenAPI 3.1 description",
            "responses": {
              "200": {
                "description": "The document.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/OpenAPIDocument"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/MalformedRequest"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/conditional-access/policies": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "listConditionalAccessPolicys",
            "tags": [
              "Conditional access"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "List conditional-access policys",
            "responses": {
              "200": {
                "description": "Every conditional-access policy of the token's tenant.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/ConditionalAccessPolicyList"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            },
            "parameters": [
              {
                "name": "top",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 1000
                },
                "description": "Documents per page, 1…1000 (default 1000); anything else is a 400."
              },
              {
                "name": "skip",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 0,
                  "maximum": 100000,
                  "default": 0
                },
                "description": "How many to pass over (in ID order): the next page's `nextLink` carries it. 0…100,000; anything else is a 400."
              }
            ]
          },
          "post": {
            "operationId": "createConditionalAccessPolicy",
            "tags": [
              "Conditional access"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Create a conditional-access policy",
            "description": "Validated as strictly as the configuration files; audited.",
            "parameters": [
              {
                "$ref": "#/components/parameters/Force"
              },
              {
                "$ref": "#/components/parameters/DryRun"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/ConditionalAccessPolicyInput"
                  },
                  "examples": {
                    "reportOnlyMfa": {
                      "summary": "Report-only: MFA for everyone everywhere",
                      "value": {
                        "displayName": "Report-only: MFA for everyone",
                        "state": "enabledForReportingButNotEnforced",
                        "conditions": {
                          "users": {
                            "includeUsers": [
                              "All"
                            ]
                          },
                          "applications": {
                            "includeApplications": [
                              "All"
                            ]
                          },
                          "platforms": {
                            "includePlatforms": [
                              "iOS",
                              "android"
                            ]
                          }
                        },
                        "grantControls": {
                          "operator": "OR",
                          "builtInControls": [
                            "mfa"
                          ]
                        }
                      }
                    }
                  }
                }
              }
            },
            "responses": {
              "200": {
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/DryRunResult"
                    }
                  }
                },
                "description": "A dry run's answer (`?dryRun=true`).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETagUnlessDryRunCreate"
                  }
                }
              },
              "201": {
                "description": "The stored conditional-access policy.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  },
                  "Location": {
                    "$ref": "#/components/headers/Location"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/ConditionalAccessPolicy"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/conditional-access/policies/{id}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/DocumentId"
            }
          ],
          "get": {
            "operationId": "getConditionalAccessPolicy",
            "tags": [
              "Conditional access"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Read a conditional-access policy",
            "responses": {
              "200": {
                "$ref": "#/components/responses/ConditionalAccessPolicy"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "put": {
            "operationId": "replaceConditionalAccessPolicy",
            "tags": [
              "Conditional access"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Replace a conditional-access policy",
            "description": "Requires `If-Match` (or `If-None-Match: *` to create). The body's `id`, when present, must equal the path's. An unchanged document is not rewritten (same ETag, no audit record).",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchReplace"
              },
              {
                "$ref": "#/components/parameters/IfNoneMatchCreate"
              },
              {
                "$ref": "#/components/parameters/Force"
              },
              {
                "$ref": "#/components/parameters/DryRun"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/ConditionalAccessPolicyInput"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The conditional-access policy.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETagUnlessDryRunCreate"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "anyOf": [
                        {
                          "$ref": "#/components/schemas/ConditionalAccessPolicy"
                        },
                        {
                          "$ref": "#/components/schemas/DryRunResult"
                        }
                      ]
                    }
                  }
                }
              },
              "201": {
                "$ref": "#/components/responses/ConditionalAccessPolicy",
                "description": "The stored conditional-access policy, created (`If-None-Match: *`)."
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "428": {
                "$ref": "#/components/responses/PreconditionRequired"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "delete": {
            "operationId": "deleteConditionalAccessPolicy",
            "tags": [
              "Conditional access"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Delete a conditional-access policy",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchRequired"
              }
            ],
            "responses": {
              "204": {
                "$ref": "#/components/responses/Deleted"
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "428": {
                "$ref": "#/components/responses/PreconditionRequired"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/named-locations": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "listNamedLocations",
            "tags": [
              "Conditional access"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "List named locations",
            "responses": {
              "200": {
                "description": "Every named location of the token's tenant.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/NamedLocationList"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            },
            "parameters": [
              {
                "name": "top",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 1000
                },
                "description": "Documents per page, 1…1000 (default 1000); anything else is a 400."
              },
              {
                "name": "skip",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 0,
                  "maximum": 100000,
                  "default": 0
                },
                "description": "How many to pass over (in ID order): the next page's `nextLink` carries it. 0…100,000; anything else is a 400."
              }
            ]
          },
          "post": {
            "operationId": "createNamedLocation",
            "tags": [
              "Conditional access"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Create a named location",
            "description": "Validated as strictly as the configuration files; audited.",
            "parameters": [
              {
                "$ref": "#/components/parameters/DryRun"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/NamedLocationInput"
                  },
                  "examples": {
                    "documentationRanges": {
                      "summary": "A trusted location",
                      "value": {
                        "displayName": "Branch office",
                        "ipRanges": [
                          "198.51.100.0/24",
                          "2001:db8:1::/48"
                        ],
                        "isTrusted": true
                      }
                    }
                  }
                }
              }
            },
            "responses": {
              "200": {
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/DryRunResult"
                    }
                  }
                },
                "description": "A dry run's answer (`?dryRun=true`).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETagUnlessDryRunCreate"
                  }
                }
              },
              "201": {
                "description": "The stored named location.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  },
                  "Location": {
                    "$ref": "#/components/headers/Location"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/NamedLocation"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/named-locations/{id}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/DocumentId"
            }
          ],
          "get": {
            "operationId": "getNamedLocation",
            "tags": [
              "Conditional access"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Read a named location",
            "responses": {
              "200": {
                "$ref": "#/components/responses/NamedLocation"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "put": {
            "operationId": "replaceNamedLocation",
            "tags": [
              "Conditional access"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Replace a named location",
            "description": "Requires `If-Match` (or `If-None-Match: *` to create). The body's `id`, when present, must equal the path's. An unchanged document is not rewritten (same ETag, no audit record).",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchReplace"
              },
              {
                "$ref": "#/components/parameters/IfNoneMatchCreate"
              },
              {
                "$ref": "#/components/parameters/DryRun"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/NamedLocationInput"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The named location.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETagUnlessDryRunCreate"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "anyOf": [
                        {
                          "$ref": "#/components/schemas/NamedLocation"
                        },
                        {
                          "$ref": "#/components/schemas/DryRunResult"
                        }
                      ]
                    }
                  }
                }
              },
              "201": {
                "$ref": "#/components/responses/NamedLocation",
                "description": "The stored named location, created (`If-None-Match: *`)."
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "428": {
                "$ref": "#/components/responses/PreconditionRequired"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "delete": {
            "operationId": "deleteNamedLocation",
            "tags": [
              "Conditional access"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Delete a named location",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchRequired"
              }
            ],
            "responses": {
              "204": {
                "$ref": "#/components/responses/Deleted"
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "428": {
                "$ref": "#/components/responses/PreconditionRequired"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/app-protection/policies": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "listAppProtectionPolicys",
            "tags": [
              "App protection"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "List app protection policys",
            "responses": {
              "200": {
                "description": "Every app protection policy of the token's tenant.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/AppProtectionPolicyList"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            },
            "parameters": [
              {
                "name": "top",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 1000
                },
                "description": "Documents per page, 1…1000 (default 1000); anything else is a 400."
              },
              {
                "name": "skip",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 0,
                  "maximum": 100000,
                  "default": 0
                },
                "description": "How many to pass over (in ID order): the next page's `nextLink` carries it. 0…100,000; anything else is a 400."
              }
            ]
          },
          "post": {
            "operationId": "createAppProtectionPolicy",
            "tags": [
              "App protection"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Create a app protection policy",
            "description": "Validated as strictly as the configuration files; audited.",
            "parameters": [
              {
                "$ref": "#/components/parameters/DryRun"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/AppProtectionPolicyInput"
                  },
                  "examples": {
                    "mailAllUsers": {
                      "summary": "Contoso Mail for iOS (demo tenant), every user",
                      "value": {
                        "displayName": "Mail: PIN and no jailbreak",
                        "targets": {
                          "applications": [
                            "c0ffee00-1111-4a2b-8c3d-4e5f6a7b8c01"
                          ],
                          "includeGroups": [
                            "All"
                          ]
                        },
                        "settings": {
                          "pinRequired": true,
                          "minimumOsVersion": "17.0",
                          "blockJailbrokenDevices": true,
                          "saveAs": {
                            "blocked": true,
                            "allowedLocations": [
                              "oneDriveForBusiness"
                            ]
                          },
                          "recheckIntervalMinutes": 30,
                          "offlineGracePeriodMinutes": 720
                        }
                      }
                    }
                  }
                }
              }
            },
            "responses": {
              "200": {
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/DryRunResult"
                    }
                  }
                },
                "description": "A dry run's answer (`?dryRun=true`).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETagUnlessDryRunCreate"
                  }
                }
              },
              "201": {
                "description": "The stored app protection policy.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  },
                  "Location": {
                    "$ref": "#/components/headers/Location"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/AppProtectionPolicy"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/app-protection/policies/{id}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/DocumentId"
            }
          ],
          "get": {
            "operationId": "getAppProtectionPolicy",
            "tags": [
              "App protection"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Read a app protection policy",
            "responses": {
              "200": {
                "$ref": "#/components/responses/AppProtectionPolicy"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "put": {
            "operationId": "replaceAppProtectionPolicy",
            "tags": [
              "App protection"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Replace a app protection policy",
            "description": "Requires `If-Match` (or `If-None-Match: *` to create). The body's `id`, when present, must equal the path's. An unchanged document is not rewritten (same ETag, no audit record).",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchReplace"
              },
              {
                "$ref": "#/components/parameters/IfNoneMatchCreate"
              },
              {
                "$ref": "#/components/parameters/DryRun"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/AppProtectionPolicyInput"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The app protection policy.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETagUnlessDryRunCreate"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "anyOf": [
                        {
                          "$ref": "#/components/schemas/AppProtectionPolicy"
                        },
                        {
                          "$ref": "#/components/schemas/DryRunResult"
                        }
                      ]
                    }
                  }
                }
              },
              "201": {
                "$ref": "#/components/responses/AppProtectionPolicy",
                "description": "The stored app protection policy, created (`If-None-Match: *`)."
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "428": {
                "$ref": "#/components/responses/PreconditionRequired"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "delete": {
            "operationId": "deleteAppProtectionPolicy",
            "tags": [
              "App protection"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Delete a app protection policy",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchRequired"
              }
            ],
            "responses": {
              "204": {
                "$ref": "#/components/responses/Deleted"
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "428": {
                "$ref": "#/components/responses/PreconditionRequired"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/conditional-access/evaluate": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "post": {
            "operationId": "evaluateConditionalAccess",
            "tags": [
              "Conditional access"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "What-if: evaluate a described sign-in against the stored policies or drafts",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/WhatIfRequest"
                  },
                  "examples": {
                    "aliceOnIOS": {
                      "summary": "Alice, Contoso Mail for iOS, calling the mail API (demo tenant)",
                      "value": {
                        "signIn": {
                          "userId": "alice@contoso.example",
                          "clientAppId": "c0ffee00-1111-4a2b-8c3d-4e5f6a7b8c01",
                          "resourceAppId": "api://contoso-mail",
                          "platform": "iOS",
                          "ipAddress": "203.0.113.7",
                          "clientAppType": "mobileAppsAndDesktopClients",
                          "capabilities": [
                            "protapp"
                          ],
                          "appProtection": "none"
                        }
                      }
                    }
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The sign-in record the evaluation would write (nothing is issued or logged).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/WhatIfResponse"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/conditional-access/impact": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "post": {
            "operationId": "conditionalAccessImpact",
            "tags": [
              "Conditional access"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Impact of draft policies: the stored sign-ins of a window replayed with the drafts applied; nothing is enforced",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/ImpactRequest"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The summary and the changed sign-ins (at most 100 listed).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/ImpactReport"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/sign-ins": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "listSignIns",
            "tags": [
              "Conditional access"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Sign-in records, newest first, paged",
            "parameters": [
              {
                "name": "user",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                },
                "description": "Object ID or UPN."
              },
              {
                "$ref": "#/components/parameters/App"
              },
              {
                "name": "resource",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                },
                "description": "Resource application ID or identifier URI."
              },
              {
                "name": "status",
                "in": "query",
                "required": false,
                "schema": {
                  "$ref": "#/components/schemas/ConditionalAccessStatus"
                }
              },
              {
                "name": "policy",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                },
                "description": "A conditional-access policy ID."
              },
              {
                "name": "correlationId",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "from",
                "in": "query",
                "required": false,
                "schema": {
                  "$ref": "#/components/schemas/DateTimeFilter"
                },
                "description": "ISO 8601 date-time without fractional seconds."
              },
              {
                "name": "to",
                "in": "query",
                "required": false,
                "schema": {
                  "$ref": "#/components/schemas/DateTimeFilter"
                },
                "description": "ISO 8601 date-time without fractional seconds."
              },
              {
                "name": "top",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 500,
                  "default": 50
                }
              },
              {
                "$ref": "#/components/parameters/Before"
              }
            ],
            "responses": {
              "200": {
                "description": "A page of sign-ins.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/SignInPage"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/audit": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "listAuditRecords",
            "tags": [
              "Audit"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "The audit log, newest first, paged",
            "parameters": [
              {
                "name": "top",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 500,
                  "default": 50
                },
                "description": "1…500; anything else is a 400."
              },
              {
                "$ref": "#/components/parameters/Before"
              }
            ],
            "responses": {
              "200": {
                "description": "A page of audit records.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/AuditPage"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/enrollments": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "listEnrollments",
            "tags": [
              "App protection"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "List enrollments",
            "parameters": [
              {
                "name": "account",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                },
                "description": "Object ID or UPN."
              },
              {
                "$ref": "#/components/parameters/App"
              },
              {
                "name": "device",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "status",
                "in": "query",
                "required": false,
                "schema": {
                  "$ref": "#/components/schemas/EnrollmentState"
                }
              },
              {
                "name": "top",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 1000
                },
                "description": "1…1000; anything else is a 400."
              },
              {
                "name": "skip",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 0,
                  "maximum": 100000,
                  "default": 0
                },
                "description": "How many to pass over (newest first): the next page's `nextLink` carries it. 0…100,000; anything else is a 400."
              }
            ],
            "responses": {
              "200": {
                "description": "Matching enrollments, most recently updated first.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/EnrollmentList"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/enrollments/{id}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/DocumentId"
            }
          ],
          "get": {
            "operationId": "getEnrollment",
            "tags": [
              "App protection"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "An enrollment with its history",
            "responses": {
              "200": {
                "description": "The enrollment.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/EnrollmentDetail"
                    }
                  }
                }
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/enrollments/{id}/wipe": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/DocumentId"
            }
          ],
          "post": {
            "operationId": "wipeEnrollment",
            "tags": [
              "App protection"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Selective wipe",
            "description": "Compliance is revoked at once and the account's refresh tokens at this client too; the next check-in gets `wipe`.",
            "responses": {
              "202": {
                "description": "The wiped enrollment.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Enrollment"
                    }
                  }
                }
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/outbox": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "listOutbox",
            "tags": [
              "App protection"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Compliance callback deliveries",
            "parameters": [
              {
                "name": "state",
                "in": "query",
                "required": false,
                "schema": {
                  "$ref": "#/components/schemas/OutboxState"
                }
              },
              {
                "name": "top",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 1000,
                  "default": 100
                },
                "description": "1…1000; anything else is a 400."
              },
              {
                "name": "skip",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 0,
                  "maximum": 100000,
                  "default": 0
                },
                "description": "How many to pass over (newest first): the next page's `nextLink` carries it. 0…100,000; anything else is a 400."
              }
            ],
            "responses": {
              "200": {
                "description": "Deliveries, newest first.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/OutboxList"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/outbox/{id}/redeliver": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/DocumentId"
            }
          ],
          "post": {
            "operationId": "redeliverOutboxMessage",
            "tags": [
              "App protection"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Deliver a message again",
            "responses": {
              "202": {
                "description": "Queued.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Redelivery"
                    }
                  }
                }
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/mam/v1/enrollments": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "post": {
            "operationId": "enroll",
            "tags": [
              "Compliance"
            ],
            "security": [
              {
                "complianceBearer": []
              }
            ],
            "summary": "Enroll this app instance for the token's account",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/EnrollmentRequest"
                  },
                  "examples": {
                    "iPhone": {
                      "summary": "An app instance on iOS",
                      "value": {
                        "deviceId": "5b0c6a3e-example-device",
                        "platform": "iOS",
                        "osVersion": "17.4",
                        "appVersion": "1.0.0",
                        "sdkVersion": "1.0.0"
                      }
                    }
                  }
                }
              }
            },
            "responses": {
              "200": {
                "$ref": "#/components/responses/EnrollmentResponse",
                "description": "Already enrolled (208), or not enrolled because no policy targets the account (103/225)."
              },
              "201": {
                "$ref": "#/components/responses/EnrollmentResponse",
                "description": "Enrolled (statusCode 100)."
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "description": "The account is not in the tenant's allowedAccounts (EnrollmentResponse, statusCode 230), or an app-only token (`userTokenRequired`).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "anyOf": [
                        {
                          "$ref": "#/components/schemas/EnrollmentResponse"
                        },
                        {
                          "$ref": "#/components/schemas/ApiError"
                        }
                      ]
                    }
                  }
                }
              },
              "409": {
                "$ref": "#/components/responses/EnrollmentResponse",
                "description": "Another managed account is enrolled in this app instance (statusCode 227)."
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/mam/v1/enrollments/{id}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/DocumentId"
            }
          ],
          "get": {
            "operationId": "getEnrollmentState",
            "tags": [
              "Compliance"
            ],
            "security": [
              {
                "complianceBearer": []
              }
            ],
            "summary": "Current state of the caller's enrollment",
            "responses": {
              "200": {
                "$ref": "#/components/responses/EnrollmentResponse"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/ComplianceForbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "delete": {
            "operationId": "unenroll",
            "tags": [
              "Compliance"
            ],
            "security": [
              {
                "complianceBearer": []
              }
            ],
            "summary": "Unenroll (also acknowledges a wipe)",
            "responses": {
              "200": {
                "$ref": "#/components/responses/EnrollmentResponse",
                "description": "Unenrolled (statusCode 104)."
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/ComplianceForbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/mam/v1/enrollments/{id}/checkin": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/DocumentId"
            }
          ],
          "post": {
            "operationId": "checkIn",
            "tags": [
              "Compliance"
            ],
            "security": [
              {
                "complianceBearer": []
              }
            ],
            "summary": "Check in: report state, get compliance, a newer policy and pending commands",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/CheckInRequest"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "$ref": "#/components/responses/EnrollmentResponse",
                "description": "The compliance outcome."
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/ComplianceForbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "410": {
                "$ref": "#/components/responses/ApiErrorBody",
                "description": "`unenrolled`: enroll again."
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/mam/v1/remediations": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "post": {
            "operationId": "remediate",
            "tags": [
              "Compliance"
            ],
            "security": [
              {
                "complianceBearer": []
              }
            ],
            "summary": "Remediate: enroll if needed and report what is missing",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/RemediationRequest"
                  },
                  "examples": {
                    "iPhone": {
                      "summary": "Remediate interactively on iOS",
                      "value": {
                        "deviceId": "5b0c6a3e-example-device",
                        "platform": "iOS",
                        "osVersion": "17.4",
                        "appVersion": "1.0.0",
                        "silent": false
                      }
                    }
                  }
                }
              }
            },
            "responses": {
              "200": {
                "$ref": "#/components/responses/EnrollmentResponse",
                "description": "The enrollment's state and `missing`."
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/ComplianceForbidden"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/{tenant}/oauth2/v2.0/authorize/signin": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/Tenant"
            }
          ],
          "post": {
            "operationId": "authorizeSignIn",
            "tags": [
              "OAuth"
            ],
            "security": [],
            "summary": "The sign-in page's form (and the account picker's)",
            "description": "Success redirects to the client with a code and sets the `portcullis_session` cookie; a wrong password, a lockout (50053) or a bad form shows the page again with the reason (400).",
            "requestBody": {
              "required": true,
              "content": {
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "$ref": "#/components/schemas/SignInForm"
                  }
                }
              }
            },
            "responses": {
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "302": {
                "$ref": "#/components/responses/Redirect"
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              }
            }
          }
        },
        "/{tenant}/oauth2/v2.0/authorize/mfa": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/Tenant"
            }
          ],
          "post": {
            "operationId": "authorizeSecondFactor",
            "tags": [
              "OAuth"
            ],
            "security": [],
            "summary": "The second-factor step of the sign-in page (PROTOCOL §10)",
            "description": "Registration of a TOTP authenticator or the code alone. Success continues the sign-in (a redirect to the client with a code, or the device sign-in confirmation); a wrong or replayed code (500121), a lock after five wrong codes (50053) or a bad form shows the page again with the reason (400).",
            "requestBody": {
              "required": true,
              "content": {
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "$ref": "#/components/schemas/FactorForm"
                  }
                }
              }
            },
            "responses": {
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "302": {
                "$ref": "#/components/responses/Redirect"
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              }
            }
          }
        },
        "/{tenant}/oauth2/v2.0/logout": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/Tenant"
            }
          ],
          "get": {
            "operationId": "logout",
            "tags": [
              "OAuth"
            ],
            "security": [],
            "summary": "End-session endpoint (PROTOCOL §9.3)",
            "description": "Ends the browser's session; redirects only to a `post_logout_redirect_uri` registered for the client named by `client_id` or by the (signature-checked) `id_token_hint`, otherwise shows a page.",
            "parameters": [
              {
                "name": "post_logout_redirect_uri",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "id_token_hint",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "client_id",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "state",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              }
            ],
            "responses": {
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              },
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "302": {
                "$ref": "#/components/responses/Redirect"
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              }
            }
          }
        },
        "/{tenant}/oauth2/v2.0/devicecode": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/Tenant"
            }
          ],
          "post": {
            "operationId": "deviceAuthorization",
            "tags": [
              "OAuth"
            ],
            "security": [
              {
                "clientBasic": []
              },
              {}
            ],
            "summary": "Device authorization endpoint (RFC 8628, PROTOCOL §9.5)",
            "description": "A tenant has a bounded number of pending device codes; beyond it the answer is 400 `slow_down` with `Retry-After`.",
            "requestBody": {
              "required": true,
              "content": {
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "$ref": "#/components/schemas/DeviceAuthorizationRequest"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "A device code.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/DeviceAuthorizationResponse"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/OAuthBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/OAuthInvalidClient"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/OAuthUnavailable"
              }
            }
          }
        },
        "/devicelogin": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "deviceLoginPage",
            "tags": [
              "OAuth"
            ],
            "security": [],
            "summary": "The device code page: enter the code shown by the device",
            "parameters": [
              {
                "name": "code",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                },
                "description": "Pre-fills the code."
              }
            ],
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "400": {
                "$ref": "#/components/responses/MalformedRequest"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              }
            }
          },
          "post": {
            "operationId": "deviceCodeEntered",
            "tags": [
              "OAuth"
            ],
            "security": [],
            "summary": "The code, entered: the sign-in page for that device",
            "description": "A wrong code counts against the client address like a wrong password (50053 when locked).",
            "requestBody": {
              "required": true,
              "content": {
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "$ref": "#/components/schemas/DeviceCodeForm"
                  }
                }
              }
            },
            "responses": {
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              }
            }
          }
        },
        "/devicelogin/signin": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "post": {
            "operationId": "deviceSignIn",
            "tags": [
              "OAuth"
            ],
            "security": [],
            "summary": "The device sign-in form: approve (with credentials) or deny",
            "requestBody": {
              "required": true,
              "content": {
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "$ref": "#/components/schemas/SignInForm"
                  }
                }
              }
            },
            "responses": {
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              }
            }
          }
        },
        "/static/portcullis.css": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "styleSheet",
            "tags": [
              "OAuth"
            ],
            "security": [],
            "summary": "The pages' one stylesheet",
            "responses": {
              "200": {
                "description": "CSS.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "text/css": {
                    "schema": {
                      "$ref": "#/components/schemas/StyleSheet"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/MalformedRequest"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              }
            }
          }
        },
        "/admin/v1/groups": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "listGroups",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "List groups",
            "responses": {
              "200": {
                "description": "Every group of the token's tenant.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/GroupList"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            },
            "parameters": [
              {
                "name": "top",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 1000
                },
                "description": "Documents per page, 1…1000 (default 1000); anything else is a 400."
              },
              {
                "name": "skip",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 0,
                  "maximum": 100000,
                  "default": 0
                },
                "description": "How many to pass over (in ID order): the next page's `nextLink` carries it. 0…100,000; anything else is a 400."
              }
            ]
          },
          "post": {
            "operationId": "createGroup",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Create a group",
            "description": "Validated as directory.json is (every member names a user); audited.",
            "parameters": [
              {
                "$ref": "#/components/parameters/DryRun"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/GroupInput"
                  },
                  "examples": {
                    "pilot": {
                      "summary": "A pilot group",
                      "value": {
                        "displayName": "MFA pilot",
                        "members": [
                          "3f6b6d4c-8e0a-4b5d-9f9c-4a6e8d0b2c04"
                        ]
                      }
                    }
                  }
                }
              }
            },
            "responses": {
              "200": {
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/DryRunResult"
                    }
                  }
                },
                "description": "A dry run's answer (`?dryRun=true`).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETagUnlessDryRunCreate"
                  }
                }
              },
              "201": {
                "description": "The stored group.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  },
                  "Location": {
                    "$ref": "#/components/headers/Location"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Group"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/groups/{id}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/DocumentId"
            }
          ],
          "get": {
            "operationId": "getGroup",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Read a group",
            "responses": {
              "200": {
                "description": "The group.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Group"
                    }
                  }
                }
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "put": {
            "operationId": "replaceGroup",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Replace a group",
            "description": "Requires `If-Match` (or `If-None-Match: *` to create). Membership changes apply to the next sign-in on every node.",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchReplace"
              },
              {
                "$ref": "#/components/parameters/IfNoneMatchCreate"
              },
              {
                "$ref": "#/components/parameters/DryRun"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/GroupInput"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The stored group.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETagUnlessDryRunCreate"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "anyOf": [
                        {
                          "$ref": "#/components/schemas/Group"
                        },
                        {
                          "$ref": "#/components/schemas/DryRunResult"
                        }
                      ]
                    }
                  }
                }
              },
              "201": {
                "description": "The stored group, created (`If-None-Match: *`).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Group"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "428": {
                "$ref": "#/components/responses/PreconditionRequired"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "delete": {
            "operationId": "deleteGroup",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Delete a group",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchRequired"
              }
            ],
            "responses": {
              "204": {
                "$ref": "#/components/responses/Deleted"
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "428": {
                "$ref": "#/components/responses/PreconditionRequired"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            },
            "description": "Requires `If-Match`. A group named by a conditional-access or app protection policy is refused (409)."
          }
        },
        "/admin/v1/users": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "listUsers",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "List users",
            "responses": {
              "200": {
                "description": "Every user of the token's tenant.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/UserList"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            },
            "parameters": [
              {
                "name": "top",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 1000
                },
                "description": "Documents per page, 1…1000 (default 1000); anything else is a 400."
              },
              {
                "name": "skip",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 0,
                  "maximum": 100000,
                  "default": 0
                },
                "description": "How many to pass over (in ID order): the next page's `nextLink` carries it. 0…100,000; anything else is a 400."
              }
            ]
          },
          "post": {
            "operationId": "createUser",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Create a user",
            "description": "Validated as directory.json is (JSON Pointers; UPNs unique case-insensitively); the password is hashed; audited without it.",
            "parameters": [
              {
                "$ref": "#/components/parameters/DryRun"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/UserInput"
                  },
                  "examples": {
                    "newUser": {
                      "summary": "A new user who signs in at once",
                      "value": {
                        "userPrincipalName": "frank@contoso.example",
                        "displayName": "Frank",
                        "password": "choose-a-long-one"
                      }
                    }
                  }
                }
              }
            },
            "responses": {
              "200": {
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/DryRunResult"
                    }
                  }
                },
                "description": "A dry run's answer (`?dryRun=true`).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETagUnlessDryRunCreate"
                  }
                }
              },
              "201": {
                "description": "The stored user.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  },
                  "Location": {
                    "$ref": "#/components/headers/Location"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/User"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/users/{id}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/DocumentId"
            }
          ],
          "get": {
            "operationId": "getUser",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Read a user",
            "responses": {
              "200": {
                "description": "The user.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/User"
                    }
                  }
                }
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "put": {
            "operationId": "replaceUser",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Replace a user",
            "description": "Requires `If-Match` (or `If-None-Match: *` to create). `accountEnabled: false` revokes the user's refresh tokens and ends their sessions at once.",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchReplace"
              },
              {
                "$ref": "#/components/parameters/IfNoneMatchCreate"
              },
              {
                "$ref": "#/components/parameters/DryRun"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/UserInput"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The stored user.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETagUnlessDryRunCreate"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "anyOf": [
                        {
                          "$ref": "#/components/schemas/User"
                        },
                        {
                          "$ref": "#/components/schemas/DryRunResult"
                        }
                      ]
                    }
                  }
                }
              },
              "201": {
                "description": "The stored user, created (`If-None-Match: *`).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/User"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "428": {
                "$ref": "#/components/responses/PreconditionRequired"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "delete": {
            "operationId": "deleteUser",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Delete a user",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchRequired"
              }
            ],
            "responses": {
              "204": {
                "$ref": "#/components/responses/Deleted"
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "428": {
                "$ref": "#/components/responses/PreconditionRequired"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            },
            "description": "Requires `If-Match`. A user still in a group or holding an app role is refused (409). Revokes their refresh tokens and ends their sessions."
          }
        },
        "/admin/v1/users/{id}/authentication-methods": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/UserIdentity"
            }
          ],
          "get": {
            "operationId": "listAuthenticationMethods",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "A user's second factors (metadata only)",
            "responses": {
              "200": {
                "description": "The methods.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/AuthenticationMethodList"
                    }
                  }
                }
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/users/{id}/authentication-methods/{methodId}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/UserIdentity"
            },
            {
              "$ref": "#/components/parameters/MethodId"
            }
          ],
          "delete": {
            "operationId": "resetAuthenticationMethod",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Reset a second factor: the user registers again at the next sign-in that needs one (audited)",
            "responses": {
              "204": {
                "$ref": "#/components/responses/Deleted"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/applications": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "listApplications",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "List applications",
            "responses": {
              "200": {
                "description": "Every document of the token's tenant.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/ApplicationList"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            },
            "parameters": [
              {
                "name": "top",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 1000
                },
                "description": "Documents per page, 1…1000 (default 1000); anything else is a 400."
              },
              {
                "name": "skip",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 0,
                  "maximum": 100000,
                  "default": 0
                },
                "description": "How many to pass over (in ID order): the next page's `nextLink` carries it. 0…100,000; anything else is a 400."
              }
            ]
          },
          "post": {
            "operationId": "createApplication",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Create an application",
            "description": "Validated as directory.json is (appId and identifier URIs unique, built-in ones included); a `secret` is hashed; answers and the audit show secrets as metadata only.",
            "parameters": [
              {
                "$ref": "#/components/parameters/DryRun"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/ApplicationInput"
                  },
                  "examples": {
                    "confidentialClient": {
                      "summary": "A daemon that will get its secret from POST …/secrets",
                      "value": {
                        "displayName": "Report generator",
                        "allowedGrantTypes": [
                          "client_credentials"
                        ]
                      }
                    }
                  }
                }
              }
            },
            "responses": {
              "200": {
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/DryRunResult"
                    }
                  }
                },
                "description": "A dry run's answer (`?dryRun=true`).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETagUnlessDryRunCreate"
                  }
                }
              },
              "201": {
                "description": "The stored document.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  },
                  "Location": {
                    "$ref": "#/components/headers/Location"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Application"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/applications/{id}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/AppId"
            }
          ],
          "get": {
            "operationId": "getApplication",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Read an application",
            "responses": {
              "200": {
                "description": "The document.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Application"
                    }
                  }
                }
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "put": {
            "operationId": "replaceApplication",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Replace an application",
            "description": "Requires `If-Match` (or `If-None-Match: *` to create). Without `secrets` the stored secrets stay; `{\"keyId\"}` items keep the named ones.",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchReplace"
              },
              {
                "$ref": "#/components/parameters/IfNoneMatchCreate"
              },
              {
                "$ref": "#/components/parameters/DryRun"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/ApplicationInput"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The stored document.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETagUnlessDryRunCreate"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "anyOf": [
                        {
                          "$ref": "#/components/schemas/Application"
                        },
                        {
                          "$ref": "#/components/schemas/DryRunResult"
                        }
                      ]
                    }
                  }
                }
              },
              "201": {
                "description": "The stored document, created (`If-None-Match: *`).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Application"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "428": {
                "$ref": "#/components/responses/PreconditionRequired"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "delete": {
            "operationId": "deleteApplication",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Delete an application",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchRequired"
              }
            ],
            "responses": {
              "204": {
                "$ref": "#/components/responses/Deleted"
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "428": {
                "$ref": "#/components/responses/PreconditionRequired"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            },
            "description": "Requires `If-Match`. Refused (409) while it holds or grants app roles or a policy names it; its secrets stop at once."
          }
        },
        "/admin/v1/app-role-assignments": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "listAppRoleAssignments",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "List app role assignments",
            "responses": {
              "200": {
                "description": "Every document of the token's tenant.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/AppRoleAssignmentList"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            },
            "parameters": [
              {
                "name": "top",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 1000
                },
                "description": "Documents per page, 1…1000 (default 1000); anything else is a 400."
              },
              {
                "name": "skip",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 0,
                  "maximum": 100000,
                  "default": 0
                },
                "description": "How many to pass over (in ID order): the next page's `nextLink` carries it. 0…100,000; anything else is a 400."
              }
            ]
          },
          "post": {
            "operationId": "createAppRoleAssignment",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Grant an app role",
            "description": "The principal must be a user or application of the tenant and the resource must define the role; one grant is stored once (409 for the same grant again). Effective on the next request.",
            "parameters": [
              {
                "$ref": "#/components/parameters/DryRun"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/AppRoleAssignmentInput"
                  },
                  "examples": {
                    "admin": {
                      "summary": "Make a user an administrator",
                      "value": {
                        "principalId": "4a5c7e5d-9f1b-4c6e-8a0d-5b7f9e1c3d05",
                        "resource": "api://portcullis-admin",
                        "role": "Portcullis.Admin"
                      }
                    }
                  }
                }
              }
            },
            "responses": {
              "200": {
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/DryRunResult"
                    }
                  }
                },
                "description": "A dry run's answer (`?dryRun=true`).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETagUnlessDryRunCreate"
                  }
                }
              },
              "201": {
                "description": "The stored document.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  },
                  "Location": {
                    "$ref": "#/components/headers/Location"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/AppRoleAssignment"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/app-role-assignments/{id}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/DocumentId"
            }
          ],
          "get": {
            "operationId": "getAppRoleAssignment",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Read an app role assignment",
            "responses": {
              "200": {
                "description": "The document.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/AppRoleAssignment"
                    }
                  }
                }
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "put": {
            "operationId": "replaceAppRoleAssignment",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Store an app role assignment under its ID",
            "description": "The ID must be the one the grant determines (400 otherwise); useful with `If-None-Match: *` for policy as code.",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchReplace"
              },
              {
                "$ref": "#/components/parameters/IfNoneMatchCreate"
              },
              {
                "$ref": "#/components/parameters/DryRun"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/AppRoleAssignmentInput"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The stored document.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETagUnlessDryRunCreate"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "anyOf": [
                        {
                          "$ref": "#/components/schemas/AppRoleAssignment"
                        },
                        {
                          "$ref": "#/components/schemas/DryRunResult"
                        }
                      ]
                    }
                  }
                }
              },
              "201": {
                "description": "The stored document, created (`If-None-Match: *`).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/AppRoleAssignment"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "428": {
                "$ref": "#/components/responses/PreconditionRequired"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "delete": {
            "operationId": "deleteAppRoleAssignment",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Remove an app role assignment",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchRequired"
              },
              {
                "$ref": "#/components/parameters/Force"
              }
            ],
            "responses": {
              "204": {
                "$ref": "#/components/responses/Deleted"
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "428": {
                "$ref": "#/components/responses/PreconditionRequired"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            },
            "description": "Requires `If-Match`. The role stops on the principal's next request. Removing the tenant's last Portcullis.Admin assignment is refused (409) unless `force=true`."
          }
        },
        "/admin/v1/applications/{id}/secrets": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/AppId"
            }
          ],
          "post": {
            "operationId": "addApplicationSecret",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Add a client secret",
            "description": "A new secret of 256 random bits, shown once (`Cache-Control: no-store`). Several at once allow rotation; at most 10 (409); a public client holds none (409). Needs no `If-Match` (a secret is never edited); one given is honoured.",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchOptional"
              }
            ],
            "requestBody": {
              "required": false,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/SecretRequest"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/DryRunResult"
                    }
                  }
                },
                "description": "A dry run's answer (`?dryRun=true`).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  }
                }
              },
              "201": {
                "description": "The new secret, its text in this answer only.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "$ref": "#/components/headers/Location"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/SecretCreated"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/applications/{id}/secrets/{keyId}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/AppId"
            },
            {
              "$ref": "#/components/parameters/KeyId"
            }
          ],
          "delete": {
            "operationId": "removeApplicationSecret",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Remove a client secret",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchOptional"
              }
            ],
            "responses": {
              "204": {
                "$ref": "#/components/responses/Deleted"
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            },
            "description": "It no longer authenticates, at once. Needs no `If-Match`; one given is honoured."
          }
        },
        "/admin/v1/tenant": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "getTenant",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Read the tenant",
            "responses": {
              "200": {
                "description": "The tenant.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/TenantSettings"
                    }
                  }
                }
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            },
            "description": "The tenant of the token, with its allowedAccounts."
          },
          "put": {
            "operationId": "replaceTenant",
            "tags": [
              "Directory"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Change the tenant's displayName and allowedAccounts",
            "description": "Requires `If-Match`. `allowedAccounts` applies to the next enrollment.",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchReplace"
              },
              {
                "$ref": "#/components/parameters/DryRun"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/TenantInput"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The stored tenant.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETagUnlessDryRunCreate"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "anyOf": [
                        {
                          "$ref": "#/components/schemas/TenantSettings"
                        },
                        {
                          "$ref": "#/components/schemas/DryRunResult"
                        }
                      ]
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "428": {
                "$ref": "#/components/responses/PreconditionRequired"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/app-configuration/policies": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "listAppConfigurationPolicys",
            "tags": [
              "App configuration"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "List app configuration policys",
            "responses": {
              "200": {
                "description": "Every app configuration policy of the token's tenant.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/AppConfigurationPolicyList"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            },
            "parameters": [
              {
                "name": "top",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 1000
                },
                "description": "Documents per page, 1…1000 (default 1000); anything else is a 400."
              },
              {
                "name": "skip",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 0,
                  "maximum": 100000,
                  "default": 0
                },
                "description": "How many to pass over (in ID order): the next page's `nextLink` carries it. 0…100,000; anything else is a 400."
              }
            ]
          },
          "post": {
            "operationId": "createAppConfigurationPolicy",
            "tags": [
              "App configuration"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Create an app configuration policy",
            "description": "Validated strictly (JSON Pointers). A change that moves an enrolled instance's configuration sends it a `configuration-changed` SET and a `refreshConfiguration` command at its next check-in; long polls wake.",
            "parameters": [
              {
                "$ref": "#/components/parameters/DryRun"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/AppConfigurationPolicyInput"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/DryRunResult"
                    }
                  }
                },
                "description": "A dry run's answer (`?dryRun=true`).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETagUnlessDryRunCreate"
                  }
                }
              },
              "201": {
                "description": "The stored app configuration policy.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  },
                  "Location": {
                    "$ref": "#/components/headers/Location"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/AppConfigurationPolicy"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/app-configuration/policies/{id}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/DocumentId"
            }
          ],
          "get": {
            "operationId": "getAppConfigurationPolicy",
            "tags": [
              "App configuration"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Read an app configuration policy",
            "responses": {
              "200": {
                "$ref": "#/components/responses/AppConfigurationPolicy"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "put": {
            "operationId": "replaceAppConfigurationPolicy",
            "tags": [
              "App configuration"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Replace an app configuration policy",
            "description": "Validated strictly (JSON Pointers). A change that moves an enrolled instance's configuration sends it a `configuration-changed` SET and a `refreshConfiguration` command at its next check-in; long polls wake.",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchReplace"
              },
              {
                "$ref": "#/components/parameters/IfNoneMatchCreate"
              },
              {
                "$ref": "#/components/parameters/DryRun"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/AppConfigurationPolicyInput"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The app configuration policy.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETagUnlessDryRunCreate"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "anyOf": [
                        {
                          "$ref": "#/components/schemas/AppConfigurationPolicy"
                        },
                        {
                          "$ref": "#/components/schemas/DryRunResult"
                        }
                      ]
                    }
                  }
                }
              },
              "201": {
                "$ref": "#/components/responses/AppConfigurationPolicy",
                "description": "The stored app configuration policy, created (`If-None-Match: *`)."
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              },
              "428": {
                "$ref": "#/components/responses/PreconditionRequired"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "delete": {
            "operationId": "deleteAppConfigurationPolicy",
            "tags": [
              "App configuration"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Delete an app configuration policy",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchRequired"
              }
            ],
            "responses": {
              "204": {
                "$ref": "#/components/responses/Deleted"
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "428": {
                "$ref": "#/components/responses/PreconditionRequired"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/mam/v1/enrollments/{id}/configuration": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/DocumentId"
            }
          ],
          "get": {
            "operationId": "getManagedConfiguration",
            "tags": [
              "App configuration"
            ],
            "security": [
              {
                "complianceBearer": []
              }
            ],
            "summary": "The organization's configuration for this app instance",
            "responses": {
              "200": {
                "description": "The merged configuration.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/ManagedConfiguration"
                    }
                  }
                }
              },
              "304": {
                "description": "Unchanged (the version in If-None-Match is current; after `wait`, still unchanged).",
                "headers": {
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "description": "An app-only token, or an enrollment that is not compliant: its status (statusCode, complianceStatus, commands) instead of configuration.",
                "content": {
                  "application/json": {
                    "schema": {
                      "anyOf": [
                        {
                          "$ref": "#/components/schemas/EnrollmentResponse"
                        },
                        {
                          "$ref": "#/components/schemas/ApiError"
                        }
                      ]
                    }
                  }
                }
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            },
            "description": "To a compliant enrollment only. `If-None-Match` with the current version answers 304; `wait` (seconds, ≤ 60) holds such a request until the version changes (long poll). A non-compliant, wiped or unenrolled enrollment gets 403 with its status instead.",
            "parameters": [
              {
                "name": "wait",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 0,
                  "maximum": 60
                },
                "description": "Long poll: hold the request up to this many seconds for a change."
              },
              {
                "name": "If-None-Match",
                "in": "header",
                "required": false,
                "schema": {
                  "type": "string"
                },
                "description": "The version the app has (its ETag)."
              }
            ]
          }
        },
        "/admin/v1/app-configuration/policies/{id}/secrets": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/DocumentId"
            }
          ],
          "get": {
            "operationId": "listAppConfigurationSecrets",
            "tags": [
              "App configuration"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Metadata of the policy's written secrets (never the material)",
            "responses": {
              "200": {
                "description": "The metadata.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/SecretMetadataList"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin/v1/app-configuration/policies/{id}/secrets/{identifier}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/DocumentId"
            },
            {
              "$ref": "#/components/parameters/SecretIdentifier"
            }
          ],
          "get": {
            "operationId": "getAppConfigurationSecret",
            "tags": [
              "App configuration"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "A secret's metadata (never the material)",
            "responses": {
              "200": {
                "description": "The metadata.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/SecretMetadata"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          },
          "put": {
            "operationId": "putAppConfigurationSecret",
            "tags": [
              "App configuration"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Write a declared secret's material",
            "description": "The identifier must be declared by the policy; the body must fit its kind. Encrypted at rest (AES-256-GCM under a key in Keys/), never readable back; audited without the value. Needs no `If-Match`; one given is honoured.",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchOptional"
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/SecretMaterialInput"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "Replaced (or the same material again: unchanged, no new version).",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/SecretMetadata"
                    }
                  }
                }
              },
              "201": {
                "description": "Written.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "ETag": {
                    "$ref": "#/components/headers/ETag"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/SecretMetadata"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              }
            }
          },
          "delete": {
            "operationId": "deleteAppConfigurationSecret",
            "tags": [
              "App configuration"
            ],
            "security": [
              {
                "adminBearer": []
              }
            ],
            "summary": "Remove a secret's material",
            "parameters": [
              {
                "$ref": "#/components/parameters/IfMatchOptional"
              }
            ],
            "responses": {
              "204": {
                "$ref": "#/components/responses/Deleted"
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              },
              "412": {
                "$ref": "#/components/responses/PreconditionFailed"
              }
            }
          }
        },
        "/mam/v1/enrollments/{id}/secrets/{identifier}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/DocumentId"
            },
            {
              "$ref": "#/components/parameters/SecretIdentifier"
            }
          ],
          "get": {
            "operationId": "getSealedSecret",
            "tags": [
              "App configuration"
            ],
            "security": [
              {
                "complianceBearer": []
              }
            ],
            "summary": "A secret, sealed to the enrollment's appKey",
            "description": "To a compliant enrollment only (else 403 with its status). 404 for an identifier not provisioned to this account and app; 409 `appKeyRequired` without an instance key, `deviceIdentity` for a device identity (POST …/identities). Audited without the value; never cached.",
            "responses": {
              "200": {
                "description": "The sealed material.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Cache-Control": {
                    "schema": {
                      "type": "string"
                    }
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/SealedSecret"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "description": "An app-only token, or an enrollment that is not compliant: its status (statusCode, complianceStatus, commands) instead of configuration.",
                "content": {
                  "application/json": {
                    "schema": {
                      "anyOf": [
                        {
                          "$ref": "#/components/schemas/EnrollmentResponse"
                        },
                        {
                          "$ref": "#/components/schemas/ApiError"
                        }
                      ]
                    }
                  }
                }
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/mam/v1/enrollments/{id}/identities/{identifier}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/DocumentId"
            },
            {
              "$ref": "#/components/parameters/SecretIdentifier"
            }
          ],
          "post": {
            "operationId": "issueDeviceIdentity",
            "tags": [
              "App configuration"
            ],
            "security": [
              {
                "complianceBearer": []
              }
            ],
            "summary": "A device identity: the tenant's CA certifies the appKey",
            "description": "For a `device` identity provisioned to this account and app, to a compliant enrollment with an appKey. The leaf names the tenant (O), the enrollment (OU) and the account (CN); it lives `validityDays`. Post again to renew.",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/IdentityRequest"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The certificate chain.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/IssuedIdentity"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/ApiBadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthenticated"
              },
              "403": {
                "description": "An app-only token, or an enrollment that is not compliant: its status (statusCode, complianceStatus, commands) instead of configuration.",
                "content": {
                  "application/json": {
                    "schema": {
                      "anyOf": [
                        {
                          "$ref": "#/components/schemas/EnrollmentResponse"
                        },
                        {
                          "$ref": "#/components/schemas/ApiError"
                        }
                      ]
                    }
                  }
                }
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              }
            }
          }
        },
        "/{tenant}/pki/ca.pem": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "$ref": "#/components/parameters/Tenant"
            }
          ],
          "get": {
            "operationId": "getIssuingCA",
            "tags": [
              "App configuration"
            ],
            "security": [],
            "summary": "The tenant's issuing CA certificate (device identities chain to it)",
            "description": "ECDSA P-256, created on first use; ten years.",
            "responses": {
              "200": {
                "description": "The CA certificate, PEM.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Cache-Control": {
                    "$ref": "#/components/headers/PublicCache"
                  }
                },
                "content": {
                  "application/x-pem-file": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/ServiceUnavailable"
              }
            }
          }
        },
        "/admin": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "consoleHome",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "The console: its first page, or sign-in",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              }
            }
          }
        },
        "/admin/console.css": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "consoleStyleSheet",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "The console's stylesheet",
            "responses": {
              "200": {
                "description": "CSS.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  }
                },
                "content": {
                  "text/css": {
                    "schema": {
                      "$ref": "#/components/schemas/StyleSheet"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/MalformedRequest"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              }
            }
          }
        },
        "/admin/signin": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "consoleSignIn",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "Start signing in to the console (authorization code + PKCE with the built-in console client)",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              }
            },
            "parameters": [
              {
                "name": "tenant",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                },
                "description": "Domain or tenant ID."
              },
              {
                "name": "returnTo",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                },
                "description": "A console path to come back to."
              }
            ]
          }
        },
        "/admin/callback": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "consoleCallback",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "The console's redirect URI: redeems the code, opens the session",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              }
            },
            "parameters": [
              {
                "name": "code",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "state",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "error",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "error_description",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              }
            ]
          }
        },
        "/admin/signout": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "post": {
            "operationId": "consoleSignOut",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "Sign out of the console (and of the tenant's sign-in session)",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              }
            },
            "requestBody": {
              "required": false,
              "content": {
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "type": "object",
                    "properties": {
                      "csrf": {
                        "type": "string"
                      }
                    },
                    "additionalProperties": {
                      "type": "string"
                    }
                  }
                }
              }
            }
          }
        },
        "/admin/policies": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "consolePolicies",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "Conditional-access and app protection policies",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              }
            },
            "parameters": [
              {
                "name": "done",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              }
            ]
          }
        },
        "/admin/policies/state": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "post": {
            "operationId": "consolePolicyState",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "Switch a conditional-access policy's state",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              }
            },
            "requestBody": {
              "required": false,
              "content": {
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "type": "object",
                    "properties": {
                      "csrf": {
                        "type": "string"
                      }
                    },
                    "additionalProperties": {
                      "type": "string"
                    }
                  }
                }
              }
            }
          }
        },
        "/admin/edit/{kind}/{id}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "name": "kind",
              "in": "path",
              "required": true,
              "schema": {
                "type": "string"
              }
            },
            {
              "name": "id",
              "in": "path",
              "required": true,
              "schema": {
                "type": "string"
              }
            }
          ],
          "get": {
            "operationId": "consoleEditor",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "A document as JSON, to edit",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              }
            },
            "parameters": [
              {
                "name": "done",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              }
            ]
          },
          "post": {
            "operationId": "consoleSave",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "Save the edited document (with its ETag)",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              }
            },
            "requestBody": {
              "required": false,
              "content": {
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "type": "object",
                    "properties": {
                      "csrf": {
                        "type": "string"
                      }
                    },
                    "additionalProperties": {
                      "type": "string"
                    }
                  }
                }
              }
            }
          }
        },
        "/admin/new/{kind}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "name": "kind",
              "in": "path",
              "required": true,
              "schema": {
                "type": "string"
              }
            }
          ],
          "get": {
            "operationId": "consoleNew",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "A new document from a template",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              }
            },
            "parameters": [
              {
                "name": "template",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              }
            ]
          },
          "post": {
            "operationId": "consoleCreate",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "Create the document",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              }
            },
            "requestBody": {
              "required": false,
              "content": {
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "type": "object",
                    "properties": {
                      "csrf": {
                        "type": "string"
                      }
                    },
                    "additionalProperties": {
                      "type": "string"
                    }
                  }
                }
              }
            }
          }
        },
        "/admin/delete/{kind}/{id}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "name": "kind",
              "in": "path",
              "required": true,
              "schema": {
                "type": "string"
              }
            },
            {
              "name": "id",
              "in": "path",
              "required": true,
              "schema": {
                "type": "string"
              }
            }
          ],
          "get": {
            "operationId": "consoleConfirmDelete",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "Confirm a delete",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              }
            }
          },
          "post": {
            "operationId": "consoleDelete",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "Delete (with the ETag seen)",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              }
            },
            "requestBody": {
              "required": false,
              "content": {
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "type": "object",
                    "properties": {
                      "csrf": {
                        "type": "string"
                      }
                    },
                    "additionalProperties": {
                      "type": "string"
                    }
                  }
                }
              }
            }
          }
        },
        "/admin/what-if": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "consoleWhatIf",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "What if: a sign-in evaluated against the policies; the impact of a draft",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              }
            }
          },
          "post": {
            "operationId": "consoleEvaluate",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "Evaluate a described sign-in",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              }
            },
            "requestBody": {
              "required": false,
              "content": {
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "type": "object",
                    "properties": {
                      "csrf": {
                        "type": "string"
                      }
                    },
                    "additionalProperties": {
                      "type": "string"
                    }
                  }
                }
              }
            }
          }
        },
        "/admin/what-if/impact": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "post": {
            "operationId": "consoleImpact",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "The impact of a draft policy on recent sign-ins",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              }
            },
            "requestBody": {
              "required": false,
              "content": {
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "type": "object",
                    "properties": {
                      "csrf": {
                        "type": "string"
                      }
                    },
                    "additionalProperties": {
                      "type": "string"
                    }
                  }
                }
              }
            }
          }
        },
        "/admin/sign-ins": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "consoleSignIns",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "The sign-in log, newest first",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              }
            },
            "parameters": [
              {
                "name": "user",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "app",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "status",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "correlationId",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "before",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              }
            ]
          }
        },
        "/admin/enrollments": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "consoleEnrollments",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "Enrollments",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              }
            },
            "parameters": [
              {
                "name": "account",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "app",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "status",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "skip",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              }
            ]
          }
        },
        "/admin/enrollments/{id}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "name": "id",
              "in": "path",
              "required": true,
              "schema": {
                "type": "string"
              }
            }
          ],
          "get": {
            "operationId": "consoleEnrollment",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "An enrollment with its history",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              }
            },
            "parameters": [
              {
                "name": "done",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              }
            ]
          }
        },
        "/admin/enrollments/{id}/wipe": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "name": "id",
              "in": "path",
              "required": true,
              "schema": {
                "type": "string"
              }
            }
          ],
          "get": {
            "operationId": "consoleConfirmWipe",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "Confirm a selective wipe",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              }
            }
          },
          "post": {
            "operationId": "consoleWipe",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "Wipe",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              }
            },
            "requestBody": {
              "required": false,
              "content": {
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "type": "object",
                    "properties": {
                      "csrf": {
                        "type": "string"
                      }
                    },
                    "additionalProperties": {
                      "type": "string"
                    }
                  }
                }
              }
            }
          }
        },
        "/admin/callbacks": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "consoleCallbacks",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "Compliance callbacks: pending, dead letters, delivered",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              }
            },
            "parameters": [
              {
                "name": "state",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "done",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              },
              {
                "name": "skip",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              }
            ]
          }
        },
        "/admin/callbacks/{id}/redeliver": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            },
            {
              "name": "id",
              "in": "path",
              "required": true,
              "schema": {
                "type": "string"
              }
            }
          ],
          "post": {
            "operationId": "consoleRedeliver",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "Deliver a dead letter again",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              },
              "413": {
                "$ref": "#/components/responses/ContentTooLarge"
              }
            },
            "requestBody": {
              "required": false,
              "content": {
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "type": "object",
                    "properties": {
                      "csrf": {
                        "type": "string"
                      }
                    },
                    "additionalProperties": {
                      "type": "string"
                    }
                  }
                }
              }
            }
          }
        },
        "/admin/audit": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "consoleAudit",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "The audit log with each change's diff",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              }
            },
            "parameters": [
              {
                "name": "before",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              }
            ]
          }
        },
        "/admin/directory": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "consoleDirectory",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "Users, groups, applications, named locations",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              }
            },
            "parameters": [
              {
                "name": "done",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              }
            ]
          }
        },
        "/admin/app-configuration": {
          "parameters": [
            {
              "$ref": "#/components/parameters/ClientRequestIdIn"
            }
          ],
          "get": {
            "operationId": "consoleAppConfiguration",
            "tags": [
              "Console"
            ],
            "security": [],
            "summary": "App configuration policies",
            "responses": {
              "200": {
                "$ref": "#/components/responses/Page"
              },
              "303": {
                "description": "To the next page, or through sign-in when there is no console session.",
                "headers": {
                  "client-request-id": {
                    "$ref": "#/components/headers/ClientRequestId"
                  },
                  "x-ms-request-id": {
                    "$ref": "#/components/headers/MsRequestId"
                  },
                  "Location": {
                    "schema": {
                      "type": "string"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/PageError"
              },
              "403": {
                "$ref": "#/components/responses/PageError"
              },
              "404": {
                "$ref": "#/components/responses/PageError"
              },
              "409": {
                "$ref": "#/components/responses/PageError"
              },
              "500": {
                "$ref": "#/components/responses/ServerError"
              },
              "503": {
                "$ref": "#/components/responses/PageUnavailable"
              }
            },
            "parameters": [
              {
                "name": "done",
                "in": "query",
                "required": false,
                "schema": {
                  "type": "string"
                }
              }
            ]
          }
        }
      },
      "components": {
        "securitySchemes": {
          "adminBearer": {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": "Access token issued by this server for `api://portcullis-admin` carrying the app role `Portcullis.Admin`; acts on the token's tenant."
          },
          "complianceBearer": {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": "Delegated access token issued by this server for `api://portcullis-compliance`; the account and client come from the token."
          },
          "clientBasic": {
            "type": "http",
            "scheme": "basic",
            "description": "client_secret_basic: form-urlencoded client ID and secret. Alternatively client_secret_post, or `client_id` alone for public clients."
          }
        },
        "schemas": {
          "OAuthError": {
            "type": "object",
            "description": "The Microsoft-identity-platform-shaped OAuth error body (PROTOCOL §2.4, §2.5).",
            "required": [
              "error",
              "error_description",
              "error_codes",
              "timestamp",
              "trace_id",
              "correlation_id"
            ],
            "properties": {
              "error": {
                "type": "string",
                "enum": [
                  "invalid_request",
                  "invalid_client",
                  "invalid_grant",
                  "unauthorized_client",
                  "unsupported_grant_type",
                  "invalid_scope",
                  "invalid_resource",
                  "temporarily_unavailable"
                ]
              },
              "suberror": {
                "type": "string",
                "description": "MSAL's suberror: `protection_policy_required` (53005), `basic_action` (50076)."
              },
              "error_description": {
                "type": "string",
                "description": "`AADSTSnnnn: <sentence>\\r\\nTrace ID: …\\r\\nCorrelation ID: …\\r\\nTimestamp: …`"
              },
              "error_codes": {
                "type": "array",
                "minItems": 1,
                "items": {
                  "type": "integer"
                },
                "description": "The AADSTS number(s), e.g. 50126 bad credentials, 50053 account locked or too many attempts, 53003 blocked by conditional access, 53005/53009 app protection required."
              },
              "timestamp": {
                "type": "string",
                "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}Z$",
                "examples": [
                  "2026-11-21 23:04:00Z"
                ]
              },
              "trace_id": {
                "type": "string"
              },
              "correlation_id": {
                "type": "string",
                "description": "Echoes the request's `client-request-id` when it is short and plain."
              },
              "adi": {
                "type": "string",
                "description": "UPN of the account that must remediate (app-protection refusal)."
              },
              "client_info": {
                "type": "string",
                "description": "base64url of `{\"uid\":\"<oid>\",\"utid\":\"<tid>\"}` (app-protection refusal)."
              },
              "remediation": {
                "$ref": "#/components/schemas/RemediationDetails"
              }
            }
          },
          "OAuthUnavailable": {
            "description": "The OAuth error body with `error: temporarily_unavailable` (store unavailable, hashing queue full).",
            "allOf": [
              {
                "$ref": "#/components/schemas/OAuthError"
              },
              {
                "$ref": "#/components/schemas/TemporarilyUnavailable"
              }
            ]
          },
          "RemediationDetails": {
            "type": "object",
            "description": "Portcullis's extension to the 53005 refusal; MSAL ignores it.",
            "required": [
              "home_account_id",
              "account_id",
              "tenant_id",
              "upn",
              "endpoint",
              "scope",
              "policy_ids"
            ],
            "properties": {
              "home_account_id": {
                "type": "string",
                "description": "`<oid>.<tid>`"
              },
              "account_id": {
                "type": "string"
              },
              "tenant_id": {
                "type": "string"
              },
              "upn": {
                "type": "string"
              },
              "endpoint": {
                "type": "string",
                "description": "`{base}/mam/v1/remediations`"
              },
              "scope": {
                "type": "string",
                "examples": [
                  "api://portcullis-compliance/.default"
                ]
              },
              "policy_ids": {
                "$ref": "#/components/schemas/StringArray"
              }
            }
          },
          "ServerError": {
            "type": "object",
            "description": "An error no route mapped (500 `server_error`) or the store being unavailable (503 `temporarily_unavailable`).",
            "required": [
              "error",
              "error_description",
              "correlation_id",
              "trace_id"
            ],
            "properties": {
              "error": {
                "type": "string",
                "enum": [
                  "server_error",
                  "temporarily_unavailable"
                ]
              },
              "error_description": {
                "type": "string"
              },
              "correlation_id": {
                "type": "string"
              },
              "trace_id": {
                "type": "string"
              }
            }
          },
          "ServerUnavailable": {
            "allOf": [
              {
                "$ref": "#/components/schemas/ServerError"
              },
              {
                "$ref": "#/components/schemas/TemporarilyUnavailable"
              }
            ]
          },
          "ValidationProblem": {
            "type": "object",
            "required": [
              "pointer",
              "message"
            ],
            "properties": {
              "pointer": {
                "type": "string",
                "description": "JSON Pointer into the body (`/conditions/users/includeUsers/2`), or `?name` for a query parameter."
              },
              "message": {
                "type": "string"
              }
            }
          },
          "ApiError": {
            "type": "object",
            "description": "Admin and compliance API refusal.",
            "required": [
              "error"
            ],
            "properties": {
              "error": {
                "type": "object",
                "required": [
                  "code",
                  "message",
                  "correlationId"
                ],
                "properties": {
                  "code": {
                    "type": "string",
                    "description": "Stable code: unauthenticated, forbidden, validationFailed, malformedJSON, invalidIfMatch, notFound, alreadyExists, preconditionFailed, preconditionRequired, inUse, nothingToWipe, userTokenRequired, callbackNotRegistered, unenrolled."
                  },
                  "message": {
                    "type": "string"
                  },
                  "details": {
                    "type": "array",
                    "items": {
                      "$ref": "#/components/schemas/ValidationProblem"
                    }
                  },
                  "correlationId": {
                    "type": "string"
                  }
                }
              }
            }
          },
          "TokenRequest": {
            "type": "object",
            "description": "Unknown parameters are ignored. A parameter must not appear twice (400, AADSTS90014).",
            "required": [
              "grant_type"
            ],
            "properties": {
              "grant_type": {
                "type": "string",
                "enum": [
                  "client_credentials",
                  "password",
                  "refresh_token",
                  "authorization_code",
                  "urn:ietf:params:oauth:grant-type:device_code"
                ]
              },
              "client_id": {
                "type": "string"
              },
              "client_secret": {
                "type": "string",
                "description": "client_secret_post; do not combine with HTTP Basic."
              },
              "scope": {
                "type": "string",
                "description": "Space-separated: `{resourceIdentifierUri}/{scope}` or `{resourceIdentifierUri}/.default`, plus openid, profile, email, offline_access."
              },
              "username": {
                "type": "string"
              },
              "password": {
                "type": "string",
                "format": "password"
              },
              "refresh_token": {
                "type": "string"
              },
              "claims": {
                "type": "string",
                "description": "JSON claims request, e.g. `{\"access_token\":{\"xms_cc\":{\"values\":[\"protapp\"]}}}`."
              },
              "client_info": {
                "type": "string",
                "description": "`1` to receive client_info."
              },
              "microsoft_enrollment_id": {
                "type": "string",
                "description": "The client's compliance enrollment (PROTOCOL §2.2)."
              },
              "code": {
                "type": "string",
                "description": "authorization_code: the code delivered to the redirect URI (60 s, single use)."
              },
              "redirect_uri": {
                "type": "string",
                "description": "authorization_code: must equal the redirect URI of the authorization request."
              },
              "code_verifier": {
                "type": "string",
                "description": "authorization_code: the PKCE verifier (RFC 7636) of the request's code_challenge."
              },
              "device_code": {
                "type": "string",
                "description": "device_code grant: the device_code from the device authorization endpoint."
              }
            },
            "additionalProperties": {
              "type": "string"
            }
          },
          "TokenResponse": {
            "type": "object",
            "required": [
              "token_type",
              "scope",
              "expires_in",
              "ext_expires_in",
              "access_token"
            ],
            "properties": {
              "token_type": {
                "type": "string",
                "examples": [
                  "Bearer"
                ]
              },
              "scope": {
                "type": "string"
              },
              "expires_in": {
                "type": "integer"
              },
              "ext_expires_in": {
                "type": "integer"
              },
              "access_token": {
                "type": "string"
              },
              "refresh_token": {
                "type": "string"
              },
              "id_token": {
                "type": "string"
              },
              "client_info": {
                "type": "string"
              }
            }
          },
          "TokenHintRequest": {
            "type": "object",
            "required": [
              "token"
            ],
            "properties": {
              "token": {
                "type": "string",
                "minLength": 1,
                "description": "An empty `token` is a 400 (AADSTS900144)."
              },
              "token_type_hint": {
                "type": "string",
                "examples": [
                  "refresh_token",
                  "access_token"
                ]
              },
              "client_id": {
                "type": "string"
              },
              "client_secret": {
                "type": "string"
              }
            },
            "additionalProperties": {
              "type": "string"
            },
            "description": "Unknown parameters are ignored. A parameter must not appear twice (400, AADSTS90014)."
          },
          "IntrospectionResponse": {
            "type": "object",
            "description": "RFC 7662. An inactive, unknown or foreign token is `{\"active\":false}`.",
            "required": [
              "active"
            ],
            "properties": {
              "active": {
                "type": "boolean"
              },
              "scope": {
                "type": "string"
              },
              "client_id": {
                "type": "string"
              },
              "username": {
                "type": "string"
              },
              "token_type": {
                "type": "string",
                "examples": [
                  "Bearer",
                  "refresh_token"
                ]
              },
              "exp": {
                "type": "integer"
              },
              "iat": {
                "type": "integer"
              },
              "nbf": {
                "type": "integer"
              },
              "sub": {
                "type": "string"
              },
              "aud": {
                "type": "string"
              },
              "iss": {
                "type": "string"
              },
              "jti": {
                "type": "string"
              },
              "tid": {
                "type": "string"
              },
              "oid": {
                "type": "string"
              },
              "roles": {
                "$ref": "#/components/schemas/StringArray"
              }
            }
          },
          "DiscoveryDocument": {
            "type": "object",
            "description": "OpenID Connect discovery / RFC 8414 metadata; issuer `{base}/{tenantId}/v2.0`.",
            "required": [
              "issuer",
              "token_endpoint",
              "jwks_uri",
              "revocation_endpoint",
              "introspection_endpoint",
              "authorization_endpoint",
              "response_types_supported",
              "subject_types_supported",
              "id_token_signing_alg_values_supported",
              "token_endpoint_auth_methods_supported",
              "grant_types_supported",
              "scopes_supported",
              "claims_supported",
              "claims_parameter_supported",
              "portcullis_compliance_endpoint"
            ],
            "properties": {
              "issuer": {
                "type": "string"
              },
              "token_endpoint": {
                "type": "string"
              },
              "jwks_uri": {
                "type": "string"
              },
              "revocation_endpoint": {
                "type": "string"
              },
              "introspection_endpoint": {
                "type": "string"
              },
              "authorization_endpoint": {
                "type": "string"
              },
              "response_types_supported": {
                "$ref": "#/components/schemas/StringArray"
              },
              "subject_types_supported": {
                "$ref": "#/components/schemas/StringArray"
              },
              "id_token_signing_alg_values_supported": {
                "$ref": "#/components/schemas/StringArray"
              },
              "token_endpoint_auth_methods_supported": {
                "$ref": "#/components/schemas/StringArray"
              },
              "grant_types_supported": {
                "$ref": "#/components/schemas/StringArray"
              },
              "scopes_supported": {
                "$ref": "#/components/schemas/StringArray"
              },
              "claims_supported": {
                "$ref": "#/components/schemas/StringArray"
              },
              "claims_parameter_supported": {
                "type": "boolean"
              },
              "tenant_region_scope": {
                "type": "string"
              },
              "cloud_instance_name": {
                "type": "string"
              },
              "portcullis_compliance_endpoint": {
                "type": "string"
              },
              "device_authorization_endpoint": {
                "type": "string"
              },
              "end_session_endpoint": {
                "type": "string"
              },
              "code_challenge_methods_supported": {
                "$ref": "#/components/schemas/StringArray"
              },
              "response_modes_supported": {
                "$ref": "#/components/schemas/StringArray"
              }
            }
          },
          "JSONWebKey": {
            "type": "object",
            "required": [
              "kty",
              "use",
              "alg",
              "kid"
            ],
            "properties": {
              "kty": {
                "type": "string",
                "enum": [
                  "EC",
                  "RSA"
                ]
              },
              "use": {
                "type": "string",
                "examples": [
                  "sig"
                ]
              },
              "alg": {
                "type": "string",
                "enum": [
                  "ES256",
                  "RS256"
                ]
              },
              "kid": {
                "type": "string"
              },
              "crv": {
                "type": "string"
              },
              "x": {
                "type": "string"
              },
              "y": {
                "type": "string"
              },
              "n": {
                "type": "string"
              },
              "e": {
                "type": "string"
              }
            }
          },
          "JSONWebKeySet": {
            "type": "object",
            "required": [
              "keys"
            ],
            "properties": {
              "keys": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/JSONWebKey"
                }
              }
            }
          },
          "UserRealm": {
            "type": "object",
            "required": [
              "ver",
              "account_type",
              "cloud_instance_name",
              "cloud_audience_urn"
            ],
            "properties": {
              "ver": {
                "type": "string"
              },
              "account_type": {
                "type": "string",
                "enum": [
                  "Managed",
                  "Unknown"
                ]
              },
              "domain_name": {
                "type": "string"
              },
              "cloud_instance_name": {
                "type": "string"
              },
              "cloud_audience_urn": {
                "type": "string"
              }
            }
          },
          "Liveness": {
            "type": "object",
            "required": [
              "status"
            ],
            "properties": {
              "status": {
                "type": "string",
                "const": "ok"
              }
            }
          },
          "Readiness": {
            "type": "object",
            "required": [
              "status"
            ],
            "properties": {
              "status": {
                "type": "string",
                "enum": [
                  "ok",
                  "unavailable"
                ]
              },
              "store": {
                "type": "string",
                "enum": [
                  "ok",
                  "unreachable"
                ]
              },
              "keys": {
                "type": "string",
                "enum": [
                  "ok",
                  "missing"
                ]
              }
            }
          },
          "ConditionalAccessPolicy": {
            "type": "object",
            "description": "Microsoft Graph `conditionalAccessPolicy` shape (the members Portcullis enforces), as stored.",
            "required": [
              "id",
              "displayName",
              "state",
              "conditions",
              "grantControls"
            ],
            "properties": {
              "id": {
                "type": "string"
              },
              "displayName": {
                "type": "string"
              },
              "state": {
                "$ref": "#/components/schemas/PolicyState"
              },
              "conditions": {
                "type": "object",
                "required": [
                  "applications",
                  "clientAppTypes"
                ],
                "properties": {
                  "users": {
                    "type": "object",
                    "required": [
                      "includeUsers",
                      "excludeUsers",
                      "includeGroups",
                      "excludeGroups"
                    ],
                    "properties": {
                      "includeUsers": {
                        "$ref": "#/components/schemas/StringArray"
                      },
                      "excludeUsers": {
                        "$ref": "#/components/schemas/StringArray"
                      },
                      "includeGroups": {
                        "$ref": "#/components/schemas/StringArray"
                      },
                      "excludeGroups": {
                        "$ref": "#/components/schemas/StringArray"
                      }
                    }
                  },
                  "applications": {
                    "type": "object",
                    "required": [
                      "includeApplications",
                      "excludeApplications"
                    ],
                    "properties": {
                      "includeApplications": {
                        "$ref": "#/components/schemas/StringArray"
                      },
                      "excludeApplications": {
                        "$ref": "#/components/schemas/StringArray"
                      }
                    }
                  },
                  "clientApplications": {
                    "type": "object",
                    "required": [
                      "includeServicePrincipals",
                      "excludeServicePrincipals"
                    ],
                    "properties": {
                      "includeServicePrincipals": {
                        "$ref": "#/components/schemas/StringArray"
                      },
                      "excludeServicePrincipals": {
                        "$ref": "#/components/schemas/StringArray"
                      }
                    }
                  },
                  "clientAppTypes": {
                    "type": "array",
                    "items": {
                      "$ref": "#/components/schemas/ClientAppType"
                    }
                  },
                  "platforms": {
                    "type": "object",
                    "required": [
                      "includePlatforms",
                      "excludePlatforms"
                    ],
                    "properties": {
                      "includePlatforms": {
                        "type": "array",
                        "items": {
                          "$ref": "#/components/schemas/PolicyPlatform"
                        }
                      },
                      "excludePlatforms": {
                        "type": "array",
                        "items": {
                          "$ref": "#/components/schemas/PolicyPlatform"
                        }
                      }
                    }
                  },
                  "locations": {
                    "type": "object",
                    "required": [
                      "includeLocations",
                      "excludeLocations"
                    ],
                    "properties": {
                      "includeLocations": {
                        "$ref": "#/components/schemas/StringArray"
                      },
                      "excludeLocations": {
                        "$ref": "#/components/schemas/StringArray"
                      }
                    }
                  }
                }
              },
              "grantControls": {
                "type": "object",
                "required": [
                  "operator",
                  "builtInControls"
                ],
                "properties": {
                  "operator": {
                    "$ref": "#/components/schemas/GrantOperator"
                  },
                  "builtInControls": {
                    "type": "array",
                    "items": {
                      "$ref": "#/components/schemas/BuiltInControl"
                    }
                  }
                }
              }
            }
          },
          "ConditionalAccessPolicyInput": {
            "type": "object",
            "description": "Validated strictly against the tenant's directory (PROTOCOL §3): every problem is reported with its JSON Pointer. `conditions` needs `users` or `clientApplications`. A policy for workload identities (`conditions.clientApplications`) can only block. An optional member given as null counts as absent.",
            "required": [
              "displayName",
              "state",
              "conditions",
              "grantControls"
            ],
            "properties": {
              "id": {
                "type": [
                  "string",
                  "null"
                ],
                "format": "uuid",
                "description": "A GUID; generated when absent. On PUT it must equal the path's."
              },
              "displayName": {
                "type": "string",
                "minLength": 1,
                "pattern": "\\S"
              },
              "description": {
                "description": "Accepted and ignored (not stored)."
              },
              "state": {
                "$ref": "#/components/schemas/PolicyState"
              },
              "conditions": {
                "type": "object",
                "required": [
                  "applications"
                ],
                "properties": {
                  "users": {
                    "type": "object",
                    "properties": {
                      "includeUsers": {
                        "type": "array",
                        "items": {
                          "type": "string",
                          "description": "All, None or a user object ID",
                          "minLength": 1
                        }
                      },
                      "excludeUsers": {
                        "$ref": "#/components/schemas/NullableStringArray"
                      },
                      "includeGroups": {
                        "type": "array",
                        "items": {
                          "type": "string",
                          "minLength": 1
                        }
                      },
                      "excludeGroups": {
                        "$ref": "#/components/schemas/NullableStringArray"
                      },
                      "includeRoles": {
                        "$ref": "#/components/schemas/EmptyArray"
                      },
                      "excludeRoles": {
                        "$ref": "#/components/schemas/EmptyArray"
                      },
                      "includeGuestsOrExternalUsers": {
                        "type": "null"
                      },
                      "excludeGuestsOrExternalUsers": {
                        "type": "null"
                      }
                    },
                    "additionalProperties": false,
                    "anyOf": [
                      {
                        "required": [
                          "includeUsers"
                        ],
                        "properties": {
                          "includeUsers": {
                            "minItems": 1
                          }
                        }
                      },
                      {
                        "required": [
                          "includeGroups"
                        ],
                        "properties": {
                          "includeGroups": {
                            "minItems": 1
                          }
                        }
                      }
                    ],
                    "description": "Name the users (`includeUsers`: All, None or user object IDs) or include groups."
                  },
                  "applications": {
                    "type": "object",
                    "required": [
                      "includeApplications"
                    ],
                    "properties": {
                      "includeApplications": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                          "type": "string",
                          "description": "All, None or an application ID",
                          "minLength": 1
                        }
                      },
                      "excludeApplications": {
                        "$ref": "#/components/schemas/NullableStringArray"
                      },
                      "includeUserActions": {
                        "$ref": "#/components/schemas/EmptyArray"
                      },
                      "includeAuthenticationContextClassReferences": {
                        "$ref": "#/components/schemas/EmptyArray"
                      },
                      "applicationFilter": {
                        "type": "null"
                      }
                    },
                    "additionalProperties": false
                  },
                  "clientApplications": {
                    "type": "object",
                    "required": [
                      "includeServicePrincipals"
                    ],
                    "properties": {
                      "includeServicePrincipals": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                          "type": "string",
                          "minLength": 1
                        }
                      },
                      "excludeServicePrincipals": {
                        "$ref": "#/components/schemas/NullableStringArray"
                      },
                      "servicePrincipalFilter": {
                        "type": "null"
                      }
                    },
                    "additionalProperties": false
                  },
                  "clientAppTypes": {
                    "type": [
                      "array",
                      "null"
                    ],
                    "items": {
                      "$ref": "#/components/schemas/ClientAppType",
                      "description": "Case-insensitive."
                    }
                  },
                  "platforms": {
                    "type": [
                      "object",
                      "null"
                    ],
                    "required": [
                      "includePlatforms"
                    ],
                    "properties": {
                      "includePlatforms": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                          "$ref": "#/components/schemas/PolicyPlatform",
                          "description": "Case-insensitive."
                        }
                      },
                      "excludePlatforms": {
                        "type": [
                          "array",
                          "null"
                        ],
                        "items": {
                          "$ref": "#/components/schemas/PolicyPlatform",
                          "description": "Case-insensitive."
                        }
                      }
                    },
                    "additionalProperties": false
                  },
                  "locations": {
                    "type": [
                      "object",
                      "null"
                    ],
                    "required": [
                      "includeLocations"
                    ],
                    "properties": {
                      "includeLocations": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                          "type": "string",
                          "description": "All, AllTrusted or a named location ID",
                          "minLength": 1
                        }
                      },
                      "excludeLocations": {
                        "$ref": "#/components/schemas/NullableStringArray"
                      }
                    },
                    "additionalProperties": false
                  },
                  "signInRiskLevels": {
                    "$ref": "#/components/schemas/EmptyArray"
                  },
                  "userRiskLevels": {
                    "$ref": "#/components/schemas/EmptyArray"
                  },
                  "servicePrincipalRiskLevels": {
                    "$ref": "#/components/schemas/EmptyArray"
                  },
                  "devices": {
                    "type": "null"
                  },
                  "times": {
                    "type": "null"
                  },
                  "insiderRiskLevels": {
                    "type": "null"
                  },
                  "authenticationFlows": {
                    "type": "null"
                  }
                },
                "additionalProperties": false,
                "anyOf": [
                  {
                    "required": [
                      "users"
                    ]
                  },
                  {
                    "required": [
                      "clientApplications"
                    ]
                  }
                ]
              },
              "grantControls": {
                "type": "object",
                "required": [
                  "operator",
                  "builtInControls"
                ],
                "properties": {
                  "operator": {
                    "$ref": "#/components/schemas/GrantOperator"
                  },
                  "builtInControls": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                      "$ref": "#/components/schemas/BuiltInControl",
                      "description": "Case-insensitive. compliantDevice, domainJoinedDevice, passwordChange, termsOfUse and authenticationStrength cannot be enforced and are refused."
                    },
                    "description": "`block` cannot be combined with other controls.",
                    "if": {
                      "contains": {
                        "const": "block"
                      }
                    },
                    "then": {
                      "maxItems": 1
                    }
                  },
                  "customAuthenticationFactors": {
                    "$ref": "#/components/schemas/EmptyArray"
                  },
                  "termsOfUse": {
                    "$ref": "#/components/schemas/EmptyArray"
                  },
                  "authenticationStrength": {
                    "type": "null"
                  }
                },
                "additionalProperties": false
              },
              "sessionControls": {
                "type": "null"
              },
              "createdDateTime": {},
              "modifiedDateTime": {},
              "templateId": {},
              "@odata.type": {},
              "@odata.context": {}
            },
            "additionalProperties": false,
            "if": {
              "required": [
                "conditions"
              ],
              "properties": {
                "conditions": {
                  "required": [
                    "clientApplications"
                  ]
                }
              }
            },
            "then": {
              "properties": {
                "grantControls": {
                  "properties": {
                    "builtInControls": {
                      "items": {
                        "const": "block"
                      }
                    }
                  }
                }
              }
            }
          },
          "NamedLocation": {
            "type": "object",
            "required": [
              "id",
              "displayName",
              "ipRanges",
              "isTrusted"
            ],
            "properties": {
              "id": {
                "type": "string"
              },
              "displayName": {
                "type": "string"
              },
              "ipRanges": {
                "$ref": "#/components/schemas/StringArray"
              },
              "isTrusted": {
                "type": "boolean"
              }
            }
          },
          "NamedLocationInput": {
            "type": "object",
            "required": [
              "displayName",
              "ipRanges"
            ],
            "properties": {
              "id": {
                "$ref": "#/components/schemas/OptionalId"
              },
              "displayName": {
                "type": "string",
                "minLength": 1,
                "pattern": "\\S"
              },
              "ipRanges": {
                "type": "array",
                "items": {
                  "type": "string",
                  "description": "CIDR, e.g. 203.0.113.0/24 or 2001:db8::/32",
                  "minLength": 1
                }
              },
              "isTrusted": {
                "$ref": "#/components/schemas/NullableBoolean"
              }
            },
            "additionalProperties": false,
            "description": "An optional member given as null counts as absent."
          },
          "AppProtectionSettings": {
            "type": "object",
            "description": "Settings the client SDK enforces (PROTOCOL §4); absent members take the defaults.",
            "properties": {
              "pinRequired": {
                "type": "boolean"
              },
              "minimumOsVersion": {
                "type": "string"
              },
              "minimumAppVersion": {
                "type": "string"
              },
              "blockJailbrokenDevices": {
                "type": "boolean"
              },
              "fileEncryptionRequired": {
                "type": "boolean"
              },
              "saveAs": {
                "type": "object",
                "required": [
                  "blocked",
                  "allowedLocations"
                ],
                "properties": {
                  "blocked": {
                    "type": "boolean"
                  },
                  "allowedLocations": {
                    "type": "array",
                    "items": {
                      "$ref": "#/components/schemas/SaveAsLocation"
                    }
                  }
                }
              },
              "openFrom": {
                "type": "object",
                "required": [
                  "blocked",
                  "allowedLocations"
                ],
                "properties": {
                  "blocked": {
                    "type": "boolean"
                  },
                  "allowedLocations": {
                    "type": "array",
                    "items": {
                      "$ref": "#/components/schemas/OpenFromLocation"
                    }
                  }
                }
              },
              "dataTransfer": {
                "type": "object",
                "required": [
                  "sendOrgData",
                  "receiveData"
                ],
                "properties": {
                  "sendOrgData": {
                    "$ref": "#/components/schemas/DataTransferScope"
                  },
                  "receiveData": {
                    "$ref": "#/components/schemas/DataTransferScope"
                  }
                }
              },
              "printingBlocked": {
                "type": "boolean"
              },
              "screenCaptureBlocked": {
                "type": "boolean"
              },
              "notificationPolicy": {
                "type": "string",
                "enum": [
                  "allow",
                  "blockOrgData",
                  "block"
                ]
              },
              "recheckIntervalMinutes": {
                "type": "integer"
              },
              "offlineGracePeriodMinutes": {
                "type": "integer"
              }
            }
          },
          "AppProtectionSettingsInput": {
            "type": "object",
            "properties": {
              "pinRequired": {
                "$ref": "#/components/schemas/NullableBoolean"
              },
              "minimumOsVersion": {
                "$ref": "#/components/schemas/NullableVersion"
              },
              "minimumAppVersion": {
                "$ref": "#/components/schemas/NullableVersion"
              },
              "blockJailbrokenDevices": {
                "$ref": "#/components/schemas/NullableBoolean"
              },
              "fileEncryptionRequired": {
                "$ref": "#/components/schemas/NullableBoolean"
              },
              "saveAs": {
                "type": [
                  "object",
                  "null"
                ],
                "required": [
                  "blocked"
                ],
                "properties": {
                  "blocked": {
                    "type": "boolean"
                  },
                  "allowedLocations": {
                    "type": [
                      "array",
                      "null"
                    ],
                    "items": {
                      "$ref": "#/components/schemas/SaveAsLocation"
                    }
                  }
                },
                "additionalProperties": false
              },
              "openFrom": {
                "type": [
                  "object",
                  "null"
                ],
                "required": [
                  "blocked"
                ],
                "properties": {
                  "blocked": {
                    "type": "boolean"
                  },
                  "allowedLocations": {
                    "type": [
                      "array",
                      "null"
                    ],
                    "items": {
                      "$ref": "#/components/schemas/OpenFromLocation"
                    }
                  }
                },
                "additionalProperties": false
              },
              "dataTransfer": {
                "type": [
                  "object",
                  "null"
                ],
                "properties": {
                  "sendOrgData": {
                    "$ref": "#/components/schemas/NullableDataTransferScope"
                  },
                  "receiveData": {
                    "$ref": "#/components/schemas/NullableDataTransferScope"
                  }
                },
                "additionalProperties": false
              },
              "printingBlocked": {
                "$ref": "#/components/schemas/NullableBoolean"
              },
              "screenCaptureBlocked": {
                "$ref": "#/components/schemas/NullableBoolean"
              },
              "notificationPolicy": {
                "type": [
                  "string",
                  "null"
                ],
                "enum": [
                  "allow",
                  "blockOrgData",
                  "block",
                  null
                ]
              },
              "recheckIntervalMinutes": {
                "type": [
                  "integer",
                  "null"
                ],
                "minimum": 1,
                "maximum": 1440
              },
              "offlineGracePeriodMinutes": {
                "type": [
                  "integer",
                  "null"
                ],
                "minimum": 1,
                "maximum": 43200
              }
            },
            "additionalProperties": false
          },
          "AppProtectionPolicy": {
            "type": "object",
            "required": [
              "id",
              "displayName",
              "targets",
              "settings"
            ],
            "properties": {
              "id": {
                "type": "string"
              },
              "displayName": {
                "type": "string"
              },
              "targets": {
                "type": "object",
                "required": [
                  "applications",
                  "includeGroups",
                  "excludeGroups"
                ],
                "properties": {
                  "applications": {
                    "$ref": "#/components/schemas/StringArray"
                  },
                  "includeGroups": {
                    "$ref": "#/components/schemas/StringArray"
                  },
                  "excludeGroups": {
                    "$ref": "#/components/schemas/StringArray"
                  }
                }
              },
              "settings": {
                "$ref": "#/components/schemas/AppProtectionSettings"
              }
            }
          },
          "AppProtectionPolicyInput": {
            "type": "object",
            "required": [
              "displayName",
              "targets",
              "settings"
            ],
            "properties": {
              "id": {
                "$ref": "#/components/schemas/OptionalId"
              },
              "displayName": {
                "type": "string",
                "minLength": 1,
                "pattern": "\\S"
              },
              "description": {},
              "version": {
                "description": "Accepted and ignored."
              },
              "targets": {
                "type": "object",
                "required": [
                  "applications",
                  "includeGroups"
                ],
                "properties": {
                  "applications": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                      "type": "string",
                      "description": "Client application ID",
                      "minLength": 1
                    }
                  },
                  "includeGroups": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                      "type": "string",
                      "description": "All or a group ID",
                      "minLength": 1
                    }
                  },
                  "excludeGroups": {
                    "$ref": "#/components/schemas/NullableStringArray"
                  }
                },
                "additionalProperties": false
              },
              "settings": {
                "$ref": "#/components/schemas/AppProtectionSettingsInput"
              }
            },
            "additionalProperties": false,
            "description": "An optional member given as null counts as absent."
          },
          "ConditionalAccessPolicyList": {
            "type": "object",
            "required": [
              "value"
            ],
            "properties": {
              "value": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/ConditionalAccessPolicy"
                }
              },
              "nextLink": {
                "type": "string",
                "description": "The next page, when this one is full."
              }
            }
          },
          "NamedLocationList": {
            "type": "object",
            "required": [
              "value"
            ],
            "properties": {
              "value": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/NamedLocation"
                }
              },
              "nextLink": {
                "type": "string",
                "description": "The next page, when this one is full."
              }
            }
          },
          "AppProtectionPolicyList": {
            "type": "object",
            "required": [
              "value"
            ],
            "properties": {
              "value": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/AppProtectionPolicy"
                }
              },
              "nextLink": {
                "type": "string",
                "description": "The next page, when this one is full."
              }
            }
          },
          "AppliedConditionalAccessPolicy": {
            "type": "object",
            "required": [
              "id",
              "displayName",
              "result",
              "enforcedGrantControls",
              "conditionsNotSatisfied"
            ],
            "properties": {
              "id": {
                "type": "string"
              },
              "displayName": {
                "type": "string"
              },
              "result": {
                "type": "string",
                "enum": [
                  "success",
                  "failure",
                  "notApplied",
                  "notEnabled",
                  "reportOnlySuccess",
                  "reportOnlyFailure",
                  "reportOnlyNotApplied"
                ]
              },
              "enforcedGrantControls": {
                "$ref": "#/components/schemas/StringArray"
              },
              "conditionsNotSatisfied": {
                "$ref": "#/components/schemas/StringArray"
              },
              "grantControlResults": {
                "type": "array",
                "description": "When the policy applied: each demanded control, met or not, and why.",
                "items": {
                  "type": "object",
                  "required": [
                    "control",
                    "satisfied",
                    "reason"
                  ],
                  "properties": {
                    "control": {
                      "type": "string"
                    },
                    "satisfied": {
                      "type": "boolean"
                    },
                    "reason": {
                      "type": "string"
                    }
                  }
                }
              }
            }
          },
          "SignInRecord": {
            "type": "object",
            "required": [
              "id",
              "createdDateTime",
              "correlationId",
              "tenantId",
              "clientAppId",
              "resourceAppId",
              "grantType",
              "clientAppType",
              "capabilities",
              "appProtection",
              "conditionalAccessStatus",
              "appliedConditionalAccessPolicies"
            ],
            "properties": {
              "id": {
                "type": "string"
              },
              "createdDateTime": {
                "type": "string",
                "format": "date-time"
              },
              "correlationId": {
                "type": "string"
              },
              "tenantId": {
                "type": "string"
              },
              "userId": {
                "type": "string"
              },
              "userPrincipalName": {
                "type": "string"
              },
              "clientAppId": {
                "type": "string"
              },
              "resourceAppId": {
                "type": "string"
              },
              "resource": {
                "type": "string"
              },
              "grantType": {
                "type": "string"
              },
              "clientAppType": {
                "type": "string"
              },
              "capabilities": {
                "$ref": "#/components/schemas/StringArray"
              },
              "ipAddress": {
                "type": "string"
              },
              "platform": {
                "type": "string"
              },
              "appProtection": {
                "type": "string"
              },
              "conditionalAccessStatus": {
                "$ref": "#/components/schemas/ConditionalAccessStatus"
              },
              "appliedConditionalAccessPolicies": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/AppliedConditionalAccessPolicy"
                }
              },
              "errorCode": {
                "type": "integer",
                "description": "AADSTS code of a conditional-access refusal."
              }
            }
          },
          "SignInPage": {
            "type": "object",
            "required": [
              "value"
            ],
            "properties": {
              "value": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/SignInRecord"
                }
              },
              "nextLink": {
                "type": "string",
                "description": "Path and query of the next page (absent on the last page)."
              }
            }
          },
          "WhatIfRequest": {
            "type": "object",
            "required": [
              "signIn"
            ],
            "properties": {
              "signIn": {
                "type": "object",
                "required": [
                  "clientAppId",
                  "resourceAppId"
                ],
                "properties": {
                  "userId": {
                    "type": [
                      "string",
                      "null"
                    ],
                    "description": "Object ID or UPN of a user of the tenant.",
                    "minLength": 1,
                    "pattern": "\\S"
                  },
                  "servicePrincipalId": {
                    "description": "Accepted; ignored."
                  },
                  "clientAppId": {
                    "type": "string",
                    "minLength": 1,
                    "pattern": "\\S"
                  },
                  "resourceAppId": {
                    "type": "string",
                    "description": "Application ID or identifier URI.",
                    "minLength": 1,
                    "pattern": "\\S"
                  },
                  "platform": {
                    "$ref": "#/components/schemas/NullablePlatform",
                    "description": "Case-insensitive."
                  },
                  "ipAddress": {
                    "type": [
                      "string",
                      "null"
                    ],
                    "anyOf": [
                      {
                        "format": "ipv4"
                      },
                      {
                        "format": "ipv6"
                      }
                    ],
                    "description": "An IPv4 or IPv6 address."
                  },
                  "clientAppType": {
                    "type": [
                      "string",
                      "null"
                    ],
                    "enum": [
                      "browser",
                      "mobileAppsAndDesktopClients",
                      null
                    ]
                  },
                  "capabilities": {
                    "$ref": "#/components/schemas/NullableStringArray"
                  },
                  "appProtection": {
                    "type": [
                      "string",
                      "null"
                    ],
                    "enum": [
                      "compliant",
                      "notCompliant",
                      "none",
                      null
                    ]
                  },
                  "approvedClientApp": {
                    "$ref": "#/components/schemas/NullableBoolean"
                  },
                  "mfa": {
                    "$ref": "#/components/schemas/NullableBoolean"
                  }
                },
                "additionalProperties": false
              },
              "policies": {
                "type": [
                  "array",
                  "null"
                ],
                "items": {
                  "$ref": "#/components/schemas/ConditionalAccessPolicyInput"
                },
                "description": "Draft policies evaluated instead of the stored ones."
              }
            },
            "additionalProperties": false,
            "description": "An optional member given as null counts as absent."
          },
          "WhatIfResponse": {
            "type": "object",
            "required": [
              "signIn"
            ],
            "properties": {
              "signIn": {
                "$ref": "#/components/schemas/SignInRecord"
              },
              "error": {
                "type": "string",
                "description": "The OAuth error a real grant would get."
              },
              "suberror": {
                "type": "string"
              }
            }
          },
          "AuditRecord": {
            "type": "object",
            "required": [
              "tenantId",
              "at",
              "actor",
              "action",
              "kind",
              "documentId"
            ],
            "properties": {
              "id": {
                "type": "integer",
                "format": "int64"
              },
              "tenantId": {
                "type": "string"
              },
              "at": {
                "type": "string",
                "format": "date-time"
              },
              "actor": {
                "type": "string"
              },
              "action": {
                "type": "string"
              },
              "kind": {
                "type": "string"
              },
              "documentId": {
                "type": "string"
              },
              "before": {
                "description": "The document before the change, as a JSON value (as the API shows it: no hash, no secret); absent for a create.",
                "type": [
                  "object",
                  "array",
                  "string",
                  "number",
                  "boolean",
                  "null"
                ]
              },
              "after": {
                "description": "The document after the change, as a JSON value; absent for a delete.",
                "type": [
                  "object",
                  "array",
                  "string",
                  "number",
                  "boolean",
                  "null"
                ]
              }
            }
          },
          "AuditPage": {
            "type": "object",
            "required": [
              "value"
            ],
            "properties": {
              "value": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/AuditRecord"
                }
              },
              "nextLink": {
                "type": "string",
                "description": "Path and query of the next page (absent on the last page)."
              }
            }
          },
          "ComplianceStatus": {
            "type": "object",
            "required": [
              "status"
            ],
            "properties": {
              "status": {
                "type": "string",
                "enum": [
                  "compliant",
                  "notCompliant",
                  "serviceFailure",
                  "networkFailure",
                  "interactionRequired",
                  "userCancelled"
                ]
              },
              "errorTitle": {
                "type": "string"
              },
              "errorMessage": {
                "type": "string"
              }
            }
          },
          "Enrollment": {
            "type": "object",
            "required": [
              "id",
              "tenantId",
              "userId",
              "userPrincipalName",
              "clientId",
              "deviceId",
              "state",
              "complianceStatus",
              "enrolledAt",
              "updatedAt",
              "revision"
            ],
            "properties": {
              "id": {
                "type": "string"
              },
              "tenantId": {
                "type": "string"
              },
              "userId": {
                "type": "string"
              },
              "userPrincipalName": {
                "type": "string"
              },
              "clientId": {
                "type": "string"
              },
              "deviceId": {
                "type": "string"
              },
              "platform": {
                "type": "string",
                "enum": [
                  "android",
                  "iOS",
                  "windows",
                  "macOS",
                  "linux"
                ]
              },
              "osVersion": {
                "type": "string"
              },
              "appVersion": {
                "type": "string"
              },
              "sdkVersion": {
                "type": "string"
              },
              "state": {
                "$ref": "#/components/schemas/EnrollmentState"
              },
              "complianceStatus": {
                "$ref": "#/components/schemas/ComplianceStatus"
              },
              "policyVersion": {
                "type": "string"
              },
              "appliedPolicyVersion": {
                "type": "string"
              },
              "callbackUri": {
                "type": "string"
              },
              "enrolledAt": {
                "type": "string",
                "format": "date-time"
              },
              "lastCheckInAt": {
                "type": "string",
                "format": "date-time"
              },
              "lapsesAt": {
                "type": "string",
                "format": "date-time"
              },
              "updatedAt": {
                "type": "string",
                "format": "date-time"
              },
              "revision": {
                "type": "integer",
                "format": "int64"
              }
            }
          },
          "EnrollmentList": {
            "type": "object",
            "required": [
              "value"
            ],
            "properties": {
              "value": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/Enrollment"
                }
              },
              "nextLink": {
                "type": "string",
                "description": "The next page, when this one is full."
              }
            }
          },
          "EnrollmentHistoryEntry": {
            "type": "object",
            "required": [
              "at",
              "event"
            ],
            "properties": {
              "at": {
                "type": "string",
                "format": "date-time"
              },
              "event": {
                "type": "string"
              },
              "fromStatus": {
                "type": "string"
              },
              "toStatus": {
                "type": "string"
              },
              "detail": {
                "type": "string"
              }
            }
          },
          "EnrollmentDetail": {
            "type": "object",
            "required": [
              "enrollment",
              "history"
            ],
            "properties": {
              "enrollment": {
                "$ref": "#/components/schemas/Enrollment"
              },
              "history": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/EnrollmentHistoryEntry"
                }
              }
            }
          },
          "OutboxMessage": {
            "type": "object",
            "required": [
              "id",
              "tenantId",
              "targetUri",
              "payload",
              "jti",
              "state",
              "attempts",
              "nextAttemptAt",
              "createdAt"
            ],
            "properties": {
              "id": {
                "type": "string"
              },
              "tenantId": {
                "type": "string"
              },
              "enrollmentId": {
                "type": "string"
              },
              "targetUri": {
                "type": "string"
              },
              "payload": {
                "type": "string",
                "description": "The signed Security Event Token."
              },
              "jti": {
                "type": "string"
              },
              "state": {
                "$ref": "#/components/schemas/OutboxState"
              },
              "attempts": {
                "type": "integer"
              },
              "nextAttemptAt": {
                "type": "string",
                "format": "date-time"
              },
              "lastError": {
                "type": "string"
              },
              "createdAt": {
                "type": "string",
                "format": "date-time"
              },
              "deliveredAt": {
                "type": "string",
                "format": "date-time"
              }
            }
          },
          "OutboxList": {
            "type": "object",
            "required": [
              "value"
            ],
            "properties": {
              "value": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/OutboxMessage"
                }
              },
              "nextLink": {
                "type": "string",
                "description": "The next page, when this one is full."
              }
            }
          },
          "Redelivery": {
            "type": "object",
            "required": [
              "id",
              "state"
            ],
            "properties": {
              "id": {
                "type": "string"
              },
              "state": {
                "type": "string",
                "const": "pending"
              }
            }
          },
          "EnrollmentRequest": {
            "type": "object",
            "description": "Unknown members are accepted.",
            "required": [
              "deviceId"
            ],
            "properties": {
              "deviceId": {
                "$ref": "#/components/schemas/DeviceId"
              },
              "platform": {
                "$ref": "#/components/schemas/NullablePlatform",
                "description": "android, iOS, windows, macOS or linux (case-insensitive); anything else is a 400."
              },
              "osVersion": {
                "$ref": "#/components/schemas/NullableString"
              },
              "appVersion": {
                "$ref": "#/components/schemas/NullableString"
              },
              "sdkVersion": {
                "$ref": "#/components/schemas/NullableString"
              },
              "appKey": {
                "$ref": "#/components/schemas/AppKey",
                "description": "The instance key secrets are sealed to and device identities certify (PROTOCOL §8.2); registering another replaces it."
              }
            }
          },
          "CheckInRequest": {
            "type": "object",
            "description": "Unknown members are accepted.",
            "properties": {
              "appliedPolicyVersion": {
                "$ref": "#/components/schemas/NullableString"
              },
              "osVersion": {
                "$ref": "#/components/schemas/NullableString"
              },
              "appVersion": {
                "$ref": "#/components/schemas/NullableString"
              },
              "jailbroken": {
                "$ref": "#/components/schemas/NullableBoolean"
              },
              "pinSet": {
                "$ref": "#/components/schemas/NullableBoolean"
              },
              "silent": {
                "$ref": "#/components/schemas/NullableBoolean"
              }
            }
          },
          "RemediationRequest": {
            "type": "object",
            "description": "Unknown members are accepted.",
            "required": [
              "deviceId"
            ],
            "properties": {
              "deviceId": {
                "$ref": "#/components/schemas/DeviceId"
              },
              "platform": {
                "$ref": "#/components/schemas/NullablePlatform",
                "description": "android, iOS, windows, macOS or linux (case-insensitive); anything else is a 400."
              },
              "osVersion": {
                "$ref": "#/components/schemas/NullableString"
              },
              "appVersion": {
                "$ref": "#/components/schemas/NullableString"
              },
              "sdkVersion": {
                "$ref": "#/components/schemas/NullableString"
              },
              "silent": {
                "$ref": "#/components/schemas/NullableBoolean"
              },
              "callbackUri": {
                "type": [
                  "string",
                  "null"
                ],
                "description": "Must be one of the application's registered complianceCallbackUris."
              },
              "appKey": {
                "$ref": "#/components/schemas/AppKey",
                "description": "The instance key secrets are sealed to and device identities certify (PROTOCOL §8.2); registering another replaces it."
              }
            }
          },
          "PolicyDocument": {
            "type": "object",
            "description": "The merged app protection policy the app must apply.",
            "required": [
              "version",
              "settings"
            ],
            "properties": {
              "version": {
                "type": "string"
              },
              "settings": {
                "$ref": "#/components/schemas/AppProtectionSettings"
              }
            }
          },
          "EnrollmentResponse": {
            "type": "object",
            "required": [
              "statusCode",
              "complianceStatus"
            ],
            "properties": {
              "enrollmentId": {
                "type": "string",
                "description": "Absent when the account could not be enrolled."
              },
              "statusCode": {
                "type": "integer",
                "enum": [
                  100,
                  101,
                  102,
                  103,
                  104,
                  208,
                  225,
                  227,
                  230
                ],
                "description": "Intune enrollment status: 100 new policies, 101 unchanged, 102 wipe, 103 no policy, 104 unenrolled, 208 already enrolled, 225 not targeted, 227 another managed account, 230 account not allowed (Portcullis)."
              },
              "policy": {
                "$ref": "#/components/schemas/PolicyDocument"
              },
              "complianceStatus": {
                "$ref": "#/components/schemas/ComplianceStatus"
              },
              "commands": {
                "type": "array",
                "items": {
                  "type": "string",
                  "examples": [
                    "wipe"
                  ]
                }
              },
              "missing": {
                "type": "array",
                "items": {
                  "type": "string"
                },
                "description": "policyAcknowledgement, pin, osVersion, appVersion, jailbreak, policyAssignment, allowedAccount, singleManagedAccount, wipeAcknowledgement"
              },
              "accountId": {
                "type": "string"
              },
              "tenantId": {
                "type": "string"
              },
              "upn": {
                "type": "string"
              },
              "recheckIntervalMinutes": {
                "type": "integer"
              }
            }
          },
          "OpenAPIDocument": {
            "type": "object",
            "required": [
              "openapi",
              "info",
              "paths"
            ],
            "properties": {
              "openapi": {
                "type": "string"
              },
              "info": {
                "type": "object"
              },
              "paths": {
                "type": "object"
              }
            }
          },
          "TemporarilyUnavailable": {
            "type": "object",
            "properties": {
              "error": {
                "const": "temporarily_unavailable"
              }
            }
          },
          "PolicyState": {
            "type": "string",
            "enum": [
              "enabled",
              "disabled",
              "enabledForReportingButNotEnforced"
            ]
          },
          "GrantOperator": {
            "type": "string",
            "enum": [
              "AND",
              "OR"
            ]
          },
          "EnrollmentState": {
            "type": "string",
            "enum": [
              "pending",
              "compliant",
              "notCompliant",
              "lapsed",
              "wipePending",
              "unenrolled"
            ]
          },
          "ConditionalAccessStatus": {
            "type": "string",
            "enum": [
              "success",
              "failure",
              "notApplied"
            ]
          },
          "OutboxState": {
            "type": "string",
            "enum": [
              "pending",
              "delivered",
              "deadLetter"
            ]
          },
          "SaveAsLocation": {
            "type": "string",
            "enum": [
              "oneDriveForBusiness",
              "sharePoint",
              "localDrive",
              "cameraRoll",
              "accountDocument",
              "other"
            ]
          },
          "OpenFromLocation": {
            "type": "string",
            "enum": [
              "oneDriveForBusiness",
              "sharePoint",
              "camera",
              "photos",
              "localStorage",
              "accountDocument",
              "other"
            ]
          },
          "DataTransferScope": {
            "type": "string",
            "enum": [
              "none",
              "policyManagedApps",
              "allApps"
            ]
          },
          "NullableDataTransferScope": {
            "type": [
              "string",
              "null"
            ],
            "enum": [
              "none",
              "policyManagedApps",
              "allApps",
              null
            ]
          },
          "PolicyPlatform": {
            "type": "string",
            "enum": [
              "all",
              "android",
              "iOS",
              "windows",
              "macOS",
              "linux"
            ]
          },
          "ClientAppType": {
            "type": "string",
            "enum": [
              "all",
              "browser",
              "mobileAppsAndDesktopClients"
            ]
          },
          "BuiltInControl": {
            "type": "string",
            "enum": [
              "block",
              "mfa",
              "approvedApplication",
              "compliantApplication"
            ]
          },
          "NullablePlatform": {
            "type": [
              "string",
              "null"
            ],
            "enum": [
              "android",
              "iOS",
              "windows",
              "macOS",
              "linux",
              null
            ]
          },
          "DeviceId": {
            "type": "string",
            "minLength": 1,
            "maxLength": 200,
            "pattern": "\\S",
            "description": "Not blank; at most 200 characters."
          },
          "NullableVersion": {
            "type": [
              "string",
              "null"
            ],
            "pattern": "^[0-9]{1,6}(\\.[0-9]{1,6}){0,3}$",
            "description": "Dotted version of 1–4 numeric components (at most 6 digits each), e.g. 17.0"
          },
          "OptionalId": {
            "type": [
              "string",
              "null"
            ],
            "format": "uuid",
            "description": "Generated when absent."
          },
          "DateTimeFilter": {
            "type": "string",
            "format": "date-time",
            "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(Z|[+-][0-9]{2}:[0-9]{2})$"
          },
          "StringArray": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "NullableStringArray": {
            "type": [
              "array",
              "null"
            ],
            "items": {
              "type": "string",
              "minLength": 1
            }
          },
          "EmptyArray": {
            "type": [
              "array",
              "null"
            ],
            "maxItems": 0
          },
          "NullableString": {
            "type": [
              "string",
              "null"
            ]
          },
          "NullableBoolean": {
            "type": [
              "boolean",
              "null"
            ]
          },
          "DeviceAuthorizationResponse": {
            "type": "object",
            "description": "RFC 8628 §3.2.",
            "required": [
              "device_code",
              "user_code",
              "verification_uri",
              "expires_in",
              "interval",
              "message"
            ],
            "properties": {
              "device_code": {
                "type": "string"
              },
              "user_code": {
                "type": "string",
                "description": "`XXXX-XXXX`, typed by the user at verification_uri."
              },
              "verification_uri": {
                "type": "string",
                "description": "`{base}/devicelogin`"
              },
              "expires_in": {
                "type": "integer"
              },
              "interval": {
                "type": "integer",
                "description": "Seconds between polls; faster polls answer `slow_down`."
              },
              "message": {
                "type": "string"
              }
            }
          },
          "AuthorizationRequest": {
            "type": "object",
            "description": "PROTOCOL §9.1. A parameter must not appear twice; none may exceed 4096 characters. An unknown client or an unregistered redirect URI is an error page (never a redirect); every other error redirects to the client with `error`, `error_description`, `error_codes`, `state`.",
            "properties": {
              "response_type": {
                "type": "string",
                "enum": [
                  "code"
                ]
              },
              "client_id": {
                "type": "string"
              },
              "redirect_uri": {
                "type": "string",
                "description": "Exactly a registered one; loopback URIs registered without a port match any port (RFC 8252 §7.3)."
              },
              "scope": {
                "type": "string"
              },
              "state": {
                "type": "string"
              },
              "nonce": {
                "type": "string",
                "description": "Copied into the ID token."
              },
              "code_challenge": {
                "type": "string",
                "description": "PKCE S256 challenge (43 base64url characters); required for public clients."
              },
              "code_challenge_method": {
                "type": "string",
                "enum": [
                  "S256"
                ]
              },
              "response_mode": {
                "type": "string",
                "enum": [
                  "query",
                  "fragment",
                  "form_post"
                ]
              },
              "prompt": {
                "type": "string",
                "enum": [
                  "login",
                  "none",
                  "select_account",
                  "consent"
                ]
              },
              "login_hint": {
                "type": "string"
              },
              "domain_hint": {
                "type": "string"
              },
              "claims": {
                "type": "string",
                "description": "JSON claims request (capabilities), as at the token endpoint."
              },
              "x-client-SKU": {
                "type": "string"
              },
              "x-client-OS": {
                "type": "string"
              },
              "x-client-Ver": {
                "type": "string"
              }
            },
            "additionalProperties": {
              "type": "string"
            }
          },
          "SignInForm": {
            "type": "object",
            "description": "The sign-in page's form: the sealed pending request (`ticket`), the CSRF token bound to the `portcullis_csrf` cookie, and the credentials (or `account` on the account picker, `decision` on the device sign-in).",
            "properties": {
              "ticket": {
                "type": "string"
              },
              "csrf": {
                "type": "string"
              },
              "username": {
                "type": "string"
              },
              "password": {
                "type": "string",
                "format": "password"
              },
              "account": {
                "type": "string",
                "enum": [
                  "session",
                  "other"
                ]
              },
              "decision": {
                "type": "string",
                "enum": [
                  "allow",
                  "deny"
                ]
              }
            },
            "additionalProperties": {
              "type": "string"
            }
          },
          "DeviceCodeForm": {
            "type": "object",
            "properties": {
              "csrf": {
                "type": "string"
              },
              "user_code": {
                "type": "string"
              }
            },
            "additionalProperties": {
              "type": "string"
            }
          },
          "DeviceAuthorizationRequest": {
            "type": "object",
            "required": [
              "client_id",
              "scope"
            ],
            "properties": {
              "client_id": {
                "type": "string"
              },
              "scope": {
                "type": "string"
              },
              "claims": {
                "type": "string"
              },
              "client_secret": {
                "type": "string"
              }
            },
            "additionalProperties": {
              "type": "string"
            }
          },
          "StyleSheet": {
            "type": "string"
          },
          "AuthenticationMethod": {
            "type": "object",
            "required": [
              "id",
              "@odata.type",
              "kind",
              "createdDateTime"
            ],
            "description": "A registered second factor (metadata only: the secret is never returned).",
            "properties": {
              "id": {
                "type": "string"
              },
              "@odata.type": {
                "type": "string",
                "enum": [
                  "#microsoft.graph.softwareOathAuthenticationMethod"
                ]
              },
              "kind": {
                "type": "string",
                "enum": [
                  "totp"
                ]
              },
              "createdDateTime": {
                "type": "string",
                "format": "date-time"
              },
              "lastUsedDateTime": {
                "type": "string",
                "format": "date-time"
              }
            }
          },
          "AuthenticationMethodList": {
            "type": "object",
            "required": [
              "value"
            ],
            "properties": {
              "value": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/AuthenticationMethod"
                }
              }
            }
          },
          "FactorForm": {
            "type": "object",
            "description": "The second-factor step's form: the sealed step (`ticket`), the CSRF token, and the 6-digit code (`otp`).",
            "properties": {
              "ticket": {
                "type": "string"
              },
              "csrf": {
                "type": "string"
              },
              "otp": {
                "type": "string"
              }
            },
            "additionalProperties": {
              "type": "string"
            }
          },
          "ImpactOutcome": {
            "type": "object",
            "required": [
              "status",
              "policyIds"
            ],
            "properties": {
              "status": {
                "type": "string",
                "enum": [
                  "success",
                  "failure",
                  "notApplied"
                ]
              },
              "refusal": {
                "type": "string",
                "enum": [
                  "block",
                  "mfa",
                  "approvedApplication",
                  "compliantApplication"
                ]
              },
              "policyIds": {
                "$ref": "#/components/schemas/StringArray"
              }
            }
          },
          "ImpactRequest": {
            "type": "object",
            "required": [
              "policies"
            ],
            "additionalProperties": false,
            "properties": {
              "policies": {
                "type": "array",
                "minItems": 1,
                "maxItems": 50,
                "items": {
                  "type": "object"
                },
                "description": "Draft conditional-access policies (validated like stored ones; a draft replaces the policy with its ID, or is added)."
              },
              "from": {
                "type": "string",
                "format": "date-time",
                "description": "Start of the window; default a week before its end."
              },
              "to": {
                "type": "string",
                "format": "date-time",
                "description": "End of the window (exclusive); default now (inclusive)."
              },
              "top": {
                "type": "integer",
                "minimum": 1,
                "maximum": 10000,
                "description": "At most this many sign-ins, newest first; default 1,000."
              }
            }
          },
          "ImpactReport": {
            "type": "object",
            "required": [
              "evaluated",
              "summary",
              "changes",
              "truncated"
            ],
            "properties": {
              "evaluated": {
                "type": "integer"
              },
              "summary": {
                "type": "object",
                "required": [
                  "newlyRefused",
                  "newlyAllowed",
                  "changed",
                  "unchanged"
                ],
                "properties": {
                  "newlyRefused": {
                    "type": "integer"
                  },
                  "newlyAllowed": {
                    "type": "integer"
                  },
                  "changed": {
                    "type": "integer"
                  },
                  "unchanged": {
                    "type": "integer"
                  }
                }
              },
              "changes": {
                "type": "array",
                "items": {
                  "type": "object",
                  "required": [
                    "signInId",
                    "createdDateTime",
                    "clientAppId",
                    "resourceAppId",
                    "before",
                    "after"
                  ],
                  "properties": {
                    "signInId": {
                      "type": "string"
                    },
                    "createdDateTime": {
                      "type": "string",
                      "format": "date-time"
                    },
                    "userId": {
                      "type": "string"
                    },
                    "userPrincipalName": {
                      "type": "string"
                    },
                    "clientAppId": {
                      "type": "string"
                    },
                    "resourceAppId": {
                      "type": "string"
                    },
                    "before": {
                      "$ref": "#/components/schemas/ImpactOutcome"
                    },
                    "after": {
                      "$ref": "#/components/schemas/ImpactOutcome"
                    }
                  }
                }
              },
              "truncated": {
                "type": "boolean"
              }
            }
          },
          "User": {
            "type": "object",
            "required": [
              "id",
              "userPrincipalName",
              "displayName",
              "accountEnabled"
            ],
            "description": "A user as the API shows it: never a password or its hash.",
            "properties": {
              "id": {
                "type": "string",
                "format": "uuid"
              },
              "userPrincipalName": {
                "type": "string"
              },
              "displayName": {
                "type": "string"
              },
              "accountEnabled": {
                "type": "boolean"
              }
            }
          },
          "UserInput": {
            "type": "object",
            "required": [
              "userPrincipalName"
            ],
            "additionalProperties": false,
            "description": "As in directory.json: `password` is hashed (bcrypt) and never returned; a replace without `password` or `passwordHash` keeps the stored one. `id` is generated on create when absent.",
            "properties": {
              "id": {
                "type": "string",
                "format": "uuid"
              },
              "userPrincipalName": {
                "type": "string",
                "maxLength": 256
              },
              "displayName": {
                "type": "string"
              },
              "password": {
                "type": "string",
                "format": "password",
                "maxLength": 72
              },
              "passwordHash": {
                "type": "string"
              },
              "accountEnabled": {
                "type": "boolean"
              }
            }
          },
          "UserList": {
            "type": "object",
            "required": [
              "value"
            ],
            "properties": {
              "value": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/User"
                }
              },
              "nextLink": {
                "type": "string",
                "description": "The next page, when this one is full."
              }
            }
          },
          "Group": {
            "type": "object",
            "required": [
              "id",
              "displayName",
              "members"
            ],
            "properties": {
              "id": {
                "type": "string",
                "format": "uuid"
              },
              "displayName": {
                "type": "string"
              },
              "members": {
                "$ref": "#/components/schemas/StringArray"
              }
            }
          },
          "GroupInput": {
            "type": "object",
            "required": [
              "displayName"
            ],
            "additionalProperties": false,
            "description": "As in directory.json: every member must name a user of the tenant; `id` is generated on create when absent.",
            "properties": {
              "id": {
                "type": "string",
                "format": "uuid"
              },
              "displayName": {
                "type": "string"
              },
              "members": {
                "type": "array",
                "items": {
                  "type": "string"
                }
              }
            }
          },
          "GroupList": {
            "type": "object",
            "required": [
              "value"
            ],
            "properties": {
              "value": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/Group"
                }
              },
              "nextLink": {
                "type": "string",
                "description": "The next page, when this one is full."
              }
            }
          },
          "ClientSecret": {
            "type": "object",
            "required": [
              "keyId"
            ],
            "description": "A client secret as the API shows it: metadata only, never the secret or its hash.",
            "properties": {
              "keyId": {
                "type": "string",
                "format": "uuid"
              },
              "hint": {
                "type": "string",
                "description": "The secret's first three characters."
              },
              "displayName": {
                "type": "string"
              },
              "startDateTime": {
                "type": "string",
                "format": "date-time"
              },
              "endDateTime": {
                "type": "string",
                "format": "date-time",
                "description": "After this instant the secret no longer authenticates."
              }
            }
          },
          "Application": {
            "type": "object",
            "required": [
              "appId",
              "displayName",
              "publicClient",
              "secrets",
              "allowedGrantTypes",
              "redirectUris",
              "complianceCallbackUris",
              "approvedClientApp",
              "identifierUris",
              "scopes",
              "appRoles"
            ],
            "description": "An application (client, resource or both) as the API shows it: its secrets as metadata only.",
            "properties": {
              "appId": {
                "type": "string",
                "format": "uuid"
              },
              "displayName": {
                "type": "string"
              },
              "publicClient": {
                "type": "boolean"
              },
              "secrets": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/ClientSecret"
                }
              },
              "allowedGrantTypes": {
                "type": "array",
                "items": {
                  "type": "string"
                }
              },
              "redirectUris": {
                "type": "array",
                "items": {
                  "type": "string"
                }
              },
              "complianceCallbackUris": {
                "type": "array",
                "items": {
                  "type": "string"
                }
              },
              "approvedClientApp": {
                "type": "boolean"
              },
              "identifierUris": {
                "type": "array",
                "items": {
                  "type": "string"
                }
              },
              "scopes": {
                "type": "array",
                "items": {
                  "type": "string"
                }
              },
              "appRoles": {
                "type": "array",
                "items": {
                  "type": "string"
                }
              },
              "requiredResourceAccess": {
                "type": "array",
                "maxItems": 50,
                "items": {
                  "$ref": "#/components/schemas/RequiredResourceAccess"
                }
              },
              "preAuthorizedApplications": {
                "type": "array",
                "maxItems": 100,
                "description": "As a resource: client applications that may request any of its scopes without listing them.",
                "items": {
                  "type": "string"
                }
              }
            }
          },
          "ApplicationSecretInput": {
            "type": "object",
            "additionalProperties": false,
            "description": "One item of `secrets`: `secret` (hashed; its keyId follows from it, so the same secret given again is the same secret), `secretHash`, or the `keyId` of a stored secret to keep (its other members are ignored).",
            "properties": {
              "secret": {
                "type": "string",
                "format": "password"
              },
              "secretHash": {
                "type": "string"
              },
              "keyId": {
                "type": "string",
                "format": "uuid"
              },
              "hint": {
                "type": "string"
              },
              "displayName": {
                "type": "string"
              },
              "startDateTime": {
                "type": "string"
              },
              "endDateTime": {
                "type": "string",
                "format": "date-time"
              }
            }
          },
          "ApplicationInput": {
            "type": "object",
            "required": [
              "appId",
              "displayName"
            ],
            "additionalProperties": false,
            "description": "As in directory.json. `appId` is generated on create when absent; a replace without `secrets` keeps the stored ones; at most 10 secrets; a public client holds none.",
            "properties": {
              "appId": {
                "type": "string",
                "format": "uuid"
              },
              "displayName": {
                "type": "string"
              },
              "publicClient": {
                "type": "boolean"
              },
              "secrets": {
                "type": "array",
                "maxItems": 10,
                "items": {
                  "$ref": "#/components/schemas/ApplicationSecretInput"
                }
              },
              "allowedGrantTypes": {
                "type": "array",
                "items": {
                  "type": "string"
                }
              },
              "redirectUris": {
                "type": "array",
                "items": {
                  "type": "string"
                }
              },
              "complianceCallbackUris": {
                "type": "array",
                "items": {
                  "type": "string"
                }
              },
              "approvedClientApp": {
                "type": "boolean"
              },
              "identifierUris": {
                "type": "array",
                "items": {
                  "type": "string"
                }
              },
              "scopes": {
                "type": "array",
                "items": {
                  "type": "string"
                }
              },
              "appRoles": {
                "type": "array",
                "items": {
                  "type": "string"
                }
              },
              "requiredResourceAccess": {
                "type": "array",
                "maxItems": 50,
                "items": {
                  "$ref": "#/components/schemas/RequiredResourceAccess"
                }
              },
              "preAuthorizedApplications": {
                "type": "array",
                "maxItems": 100,
                "description": "As a resource: client applications that may request any of its scopes without listing them.",
                "items": {
                  "type": "string"
                }
              }
            }
          },
          "ApplicationList": {
            "type": "object",
            "required": [
              "value"
            ],
            "properties": {
              "value": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/Application"
                }
              },
              "nextLink": {
                "type": "string",
                "description": "The next page, when this one is full."
              }
            }
          },
          "SecretRequest": {
            "type": "object",
            "additionalProperties": false,
            "description": "Optional: a name and an expiry (in the future).",
            "properties": {
              "displayName": {
                "type": "string",
                "maxLength": 128
              },
              "endDateTime": {
                "type": "string",
                "format": "date-time"
              }
            }
          },
          "SecretCreated": {
            "type": "object",
            "required": [
              "keyId",
              "secretText"
            ],
            "description": "The new secret: `secretText` appears in this answer only.",
            "properties": {
              "keyId": {
                "type": "string",
                "format": "uuid"
              },
              "hint": {
                "type": "string"
              },
              "displayName": {
                "type": "string"
              },
              "startDateTime": {
                "type": "string",
                "format": "date-time"
              },
              "endDateTime": {
                "type": "string",
                "format": "date-time"
              },
              "secretText": {
                "type": "string",
                "description": "256 random bits, base64url."
              }
            }
          },
          "AppRoleAssignment": {
            "type": "object",
            "required": [
              "id",
              "principalId",
              "resource",
              "role"
            ],
            "description": "Grants an app role of a resource to a user or a client application. The ID follows from what it grants.",
            "properties": {
              "id": {
                "type": "string",
                "format": "uuid"
              },
              "principalId": {
                "type": "string"
              },
              "resource": {
                "type": "string"
              },
              "role": {
                "type": "string"
              }
            }
          },
          "AppRoleAssignmentInput": {
            "type": "object",
            "required": [
              "principalId",
              "resource",
              "role"
            ],
            "additionalProperties": false,
            "properties": {
              "id": {
                "type": "string",
                "format": "uuid",
                "description": "If given, must be the ID the grant determines."
              },
              "principalId": {
                "type": "string",
                "description": "A user object ID or a client app ID of this tenant."
              },
              "resource": {
                "type": "string",
                "description": "The resource's identifier URI or app ID (built-in ones included)."
              },
              "role": {
                "type": "string"
              }
            }
          },
          "AppRoleAssignmentList": {
            "type": "object",
            "required": [
              "value"
            ],
            "properties": {
              "value": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/AppRoleAssignment"
                }
              },
              "nextLink": {
                "type": "string",
                "description": "The next page, when this one is full."
              }
            }
          },
          "TenantSettings": {
            "type": "object",
            "required": [
              "id",
              "domain",
              "displayName"
            ],
            "properties": {
              "id": {
                "type": "string",
                "format": "uuid"
              },
              "domain": {
                "type": "string"
              },
              "displayName": {
                "type": "string"
              },
              "allowedAccounts": {
                "type": [
                  "array",
                  "null"
                ],
                "items": {
                  "type": "string"
                },
                "description": "Only these accounts (UPNs or object IDs) may enroll; null: every account."
              }
            }
          },
          "TenantInput": {
            "type": "object",
            "additionalProperties": false,
            "description": "`id` and `domain` cannot change; `displayName` and `allowedAccounts` (≤ 10,000) can.",
            "properties": {
              "id": {
                "type": "string",
                "format": "uuid"
              },
              "domain": {
                "type": "string"
              },
              "displayName": {
                "type": "string"
              },
              "allowedAccounts": {
                "type": [
                  "array",
                  "null"
                ],
                "maxItems": 10000,
                "items": {
                  "type": "string"
                }
              }
            }
          },
          "DryRunResult": {
            "type": "object",
            "required": [
              "action",
              "id",
              "before",
              "after"
            ],
            "description": "What a write would do (`?dryRun=true`): nothing is stored.",
            "properties": {
              "action": {
                "type": "string",
                "enum": [
                  "create",
                  "change",
                  "unchanged"
                ]
              },
              "id": {
                "type": "string"
              },
              "before": {
                "description": "The stored document, or null.",
                "type": [
                  "object",
                  "null"
                ]
              },
              "after": {
                "type": "object",
                "description": "The document the write would store, as answers show it."
              }
            }
          },
          "AppConfigurationPolicyInput": {
            "type": "object",
            "required": [
              "displayName",
              "targets",
              "priority",
              "configuration"
            ],
            "additionalProperties": false,
            "description": "PROTOCOL §8.1. `configuration` is any JSON object of at most 64 KiB serialized; policies targeting the same account and app merge key by key at the top level, the lowest `priority` winning; equal priorities on an overlapping app are refused. `secrets` must be empty: this server cannot deliver secret material yet.",
            "properties": {
              "id": {
                "$ref": "#/components/schemas/OptionalId"
              },
              "displayName": {
                "type": "string",
                "minLength": 1,
                "pattern": "\\S"
              },
              "description": {},
              "targets": {
                "type": "object",
                "required": [
                  "applications",
                  "includeGroups"
                ],
                "properties": {
                  "applications": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                      "type": "string",
                      "description": "Client application ID",
                      "minLength": 1
                    }
                  },
                  "includeGroups": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                      "type": "string",
                      "description": "All or a group ID",
                      "minLength": 1
                    }
                  },
                  "excludeGroups": {
                    "$ref": "#/components/schemas/NullableStringArray"
                  }
                },
                "additionalProperties": false
              },
              "priority": {
                "type": "integer",
                "minimum": 0,
                "maximum": 1000000
              },
              "configuration": {
                "type": "object"
              },
              "secrets": {
                "type": [
                  "array",
                  "null"
                ],
                "maxItems": 50,
                "items": {
                  "$ref": "#/components/schemas/SecretDeclaration"
                }
              }
            }
          },
          "AppConfigurationPolicy": {
            "type": "object",
            "required": [
              "id",
              "displayName",
              "targets",
              "priority",
              "configuration"
            ],
            "properties": {
              "id": {
                "type": "string"
              },
              "displayName": {
                "type": "string"
              },
              "targets": {
                "type": "object"
              },
              "priority": {
                "type": "integer"
              },
              "configuration": {
                "type": "object"
              },
              "secrets": {
                "type": [
                  "array",
                  "null"
                ],
                "maxItems": 50,
                "items": {
                  "$ref": "#/components/schemas/SecretDeclaration"
                }
              }
            }
          },
          "AppConfigurationPolicyList": {
            "type": "object",
            "required": [
              "value"
            ],
            "properties": {
              "value": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/AppConfigurationPolicy"
                }
              },
              "nextLink": {
                "type": "string",
                "description": "The next page, when this one is full."
              }
            }
          },
          "ManagedConfiguration": {
            "type": "object",
            "required": [
              "version",
              "configuration",
              "secrets"
            ],
            "description": "The merged configuration for the enrollment's account and app; `configuration` is null when no policy targets them (unmanaged).",
            "properties": {
              "version": {
                "type": "string",
                "description": "A fingerprint of the content; also the ETag."
              },
              "configuration": {
                "type": [
                  "object",
                  "null"
                ]
              },
              "secrets": {
                "type": "array",
                "items": {
                  "type": "object",
                  "required": [
                    "identifier",
                    "kind"
                  ],
                  "properties": {
                    "identifier": {
                      "type": "string"
                    },
                    "kind": {
                      "type": "string",
                      "enum": [
                        "password",
                        "certificate",
                        "identity"
                      ]
                    },
                    "version": {
                      "type": [
                        "string",
                        "null"
                      ]
                    },
                    "issuance": {
                      "type": [
                        "string",
                        "null"
                      ],
                      "enum": [
                        "uploaded",
                        "device",
                        null
                      ]
                    }
                  }
                }
              }
            }
          },
          "AppKey": {
            "type": "object",
            "description": "An app instance's public key: a JWK, EC P-256 (x and y, 32 bytes each, base64url). Other JWK members are ignored.",
            "required": [
              "kty",
              "crv",
              "x",
              "y"
            ],
            "properties": {
              "kty": {
                "type": "string",
                "enum": [
                  "EC"
                ]
              },
              "crv": {
                "type": "string",
                "enum": [
                  "P-256"
                ]
              },
              "x": {
                "type": "string"
              },
              "y": {
                "type": "string"
              }
            }
          },
          "SecretDeclaration": {
            "type": "object",
            "required": [
              "identifier",
              "kind"
            ],
            "additionalProperties": false,
            "properties": {
              "identifier": {
                "type": "string",
                "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$"
              },
              "kind": {
                "type": "string",
                "enum": [
                  "password",
                  "certificate",
                  "identity"
                ]
              },
              "issuance": {
                "type": "string",
                "enum": [
                  "uploaded",
                  "device"
                ],
                "description": "Identities only (required for them)."
              },
              "validityDays": {
                "type": "integer",
                "minimum": 1,
                "maximum": 397,
                "description": "Device identities only; default 30."
              }
            }
          },
          "SecretMetadata": {
            "type": "object",
            "required": [
              "identifier",
              "kind",
              "version",
              "fingerprint",
              "updatedAt"
            ],
            "description": "What reads answer: never the material.",
            "properties": {
              "identifier": {
                "type": "string"
              },
              "kind": {
                "type": "string",
                "enum": [
                  "password",
                  "certificate",
                  "identity"
                ]
              },
              "version": {
                "type": "string"
              },
              "fingerprint": {
                "type": "string",
                "description": "SHA-256 of the leaf certificate, or a keyed hash of a password (hex)."
              },
              "notAfter": {
                "type": [
                  "string",
                  "null"
                ],
                "format": "date-time"
              },
              "updatedAt": {
                "type": "string",
                "format": "date-time"
              }
            }
          },
          "SecretMetadataList": {
            "type": "object",
            "required": [
              "value"
            ],
            "properties": {
              "value": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/SecretMetadata"
                }
              }
            }
          },
          "SecretMaterialInput": {
            "type": "object",
            "description": "One of: {password} for a password; {certificatesPem} for a certificate; {certificatesPem, privateKeyPem} (PKCS #8) or {pkcs12, passphrase} for an uploaded identity.",
            "properties": {
              "password": {
                "type": "string"
              },
              "certificatesPem": {
                "type": "string"
              },
              "privateKeyPem": {
                "type": "string"
              },
              "pkcs12": {
                "type": "string",
                "description": "base64"
              },
              "passphrase": {
                "type": "string"
              }
            }
          },
          "SealedSecret": {
            "type": "object",
            "required": [
              "identifier",
              "kind",
              "version",
              "sealed"
            ],
            "properties": {
              "identifier": {
                "type": "string"
              },
              "kind": {
                "type": "string",
                "enum": [
                  "password",
                  "certificate",
                  "identity"
                ]
              },
              "version": {
                "type": "string"
              },
              "sealed": {
                "type": "object",
                "required": [
                  "enc",
                  "ciphertext"
                ],
                "description": "HPKE (RFC 9180) base mode, DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM, to the enrollment's appKey; info = portcullis-secret-v1:{enrollmentId}:{identifier}:{version}; empty AAD. The plaintext is {password} | {certificatesPem} | {certificatesPem, privateKeyPem}.",
                "properties": {
                  "enc": {
                    "type": "string"
                  },
                  "ciphertext": {
                    "type": "string"
                  }
                }
              }
            }
          },
          "IdentityRequest": {
            "type": "object",
            "required": [
              "csr"
            ],
            "description": "Unknown members are accepted.",
            "properties": {
              "csr": {
                "type": "string",
                "description": "PEM PKCS #10, ECDSA with SHA-256, for the enrollment's appKey and signed by it."
              }
            }
          },
          "IssuedIdentity": {
            "type": "object",
            "required": [
              "certificatesPem",
              "notAfter"
            ],
            "properties": {
              "certificatesPem": {
                "type": "string",
                "description": "The leaf, then the tenant's issuing CA."
              },
              "notAfter": {
                "type": "string",
                "format": "date-time"
              }
            }
          },
          "RequiredResourceAccess": {
            "type": "object",
            "required": [
              "resourceAppId"
            ],
            "additionalProperties": false,
            "description": "A resource the application may request tokens for (PROTOCOL §11): listing it is the administrator's consent. Delegated tokens need the scope listed here (`.default` grants exactly these); app-only tokens need an app role assignment.",
            "properties": {
              "resourceAppId": {
                "type": "string",
                "description": "The resource's app ID or identifier URI."
              },
              "scopes": {
                "type": "array",
                "items": {
                  "type": "string"
                }
              },
              "appRoles": {
                "type": "array",
                "items": {
                  "type": "string"
                }
              }
            }
          }
        },
        "requestBodies": {
          "TokenHintForm": {
            "required": true,
            "content": {
              "application/x-www-form-urlencoded": {
                "schema": {
                  "$ref": "#/components/schemas/TokenHintRequest"
                }
              }
            }
          }
        },
        "parameters": {
          "Tenant": {
            "name": "tenant",
            "in": "path",
            "required": true,
            "description": "Tenant ID (GUID) or a verified domain of the tenant.",
            "schema": {
              "type": "string"
            }
          },
          "ClientRequestIdIn": {
            "name": "client-request-id",
            "in": "header",
            "required": false,
            "description": "The caller's correlation ID (1–64 of A–Z a–z 0–9 - _ .), echoed as `client-request-id` and `correlation_id`.",
            "schema": {
              "type": "string"
            }
          },
          "IfMatchRequired": {
            "name": "If-Match",
            "in": "header",
            "required": true,
            "description": "An ETag this API returned (`\"42\"`, weak `W/\"42\"` accepted) or `*` (must exist). Without it: 428. Anything else: 400 `invalidIfMatch`.",
            "schema": {
              "type": "string",
              "pattern": "^(\\*|(W/)?\"[0-9]{1,18}\")$"
            }
          },
          "IfMatchReplace": {
            "name": "If-Match",
            "in": "header",
            "required": false,
            "description": "An ETag this API returned (`\"42\"`, weak `W/\"42\"` accepted) or `*` (must exist). A PUT needs `If-Match`, or `If-None-Match: *` to create under a chosen ID; without either: 428. Anything else: 400 `invalidIfMatch`.",
            "schema": {
              "type": "string",
              "pattern": "^(\\*|(W/)?\"[0-9]{1,18}\")$"
            }
          },
          "IfNoneMatchCreate": {
            "name": "If-None-Match",
            "in": "header",
            "required": false,
            "description": "`*`: create under the path's ID; 412 when it already exists. Ignored when `If-Match` is present.",
            "schema": {
              "type": "string",
              "const": "*"
            }
          },
          "DocumentId": {
            "name": "id",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string",
              "format": "uuid"
            },
            "description": "A GUID (compared case-insensitively): any other value finds nothing (404), and a PUT refuses it (400)."
          },
          "Force": {
            "name": "force",
            "in": "query",
            "required": false,
            "description": "`true` or `1` lets a policy that blocks every user from every application pass the lock-out guard.",
            "schema": {
              "type": "boolean"
            }
          },
          "App": {
            "name": "app",
            "in": "query",
            "required": false,
            "schema": {
              "type": "string"
            },
            "description": "Client application ID."
          },
          "Before": {
            "name": "before",
            "in": "query",
            "required": false,
            "schema": {
              "type": "integer",
              "format": "int64"
            },
            "description": "Cursor from `nextLink`."
          },
          "UserIdentity": {
            "name": "id",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string",
              "maxLength": 256
            },
            "description": "The user's object ID or user principal name (case-insensitive); an unknown one is a 404."
          },
          "MethodId": {
            "name": "methodId",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string"
            },
            "description": "The authentication method's ID; an unknown one is a 404."
          },
          "DryRun": {
            "name": "dryRun",
            "in": "query",
            "required": false,
            "description": "`true` or `1`: validate and answer what the write would do (create, change or unchanged, with both documents), storing nothing; needs no precondition.",
            "schema": {
              "type": "boolean"
            }
          },
          "AppId": {
            "name": "id",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string",
              "format": "uuid"
            },
            "description": "The application's appId."
          },
          "KeyId": {
            "name": "keyId",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string",
              "format": "uuid"
            },
            "description": "The secret's keyId."
          },
          "IfMatchOptional": {
            "name": "If-Match",
            "in": "header",
            "required": false,
            "schema": {
              "type": "string"
            },
            "description": "Optional: the application's ETag; a stale one is refused (412)."
          },
          "SecretIdentifier": {
            "name": "identifier",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string",
              "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$"
            },
            "description": "The secret's identifier as the policy declares it (case-insensitive), such as com.contoso.mail.smtp."
          }
        },
        "headers": {
          "ClientRequestId": {
            "description": "The correlation ID: the request's `client-request-id` when short and plain, else a generated one.",
            "required": true,
            "schema": {
              "type": "string"
            }
          },
          "MsRequestId": {
            "description": "This request's trace ID (`trace_id`).",
            "required": true,
            "schema": {
              "type": "string"
            }
          },
          "RetryAfter": {
            "description": "Seconds to wait before retrying.",
            "required": true,
            "schema": {
              "type": "integer",
              "minimum": 0
            }
          },
          "ETag": {
            "description": "The stored document's version, e.g. `\"42\"`.",
            "required": true,
            "schema": {
              "type": "string"
            }
          },
          "Location": {
            "description": "Path of the created document.",
            "required": true,
            "schema": {
              "type": "string"
            }
          },
          "NoStore": {
            "description": "`no-store`",
            "required": true,
            "schema": {
              "type": "string",
              "const": "no-store"
            }
          },
          "PragmaNoCache": {
            "description": "`no-cache`",
            "required": true,
            "schema": {
              "type": "string",
              "const": "no-cache"
            }
          },
          "PublicCache": {
            "description": "`public, max-age=300`",
            "required": true,
            "schema": {
              "type": "string"
            }
          },
          "BearerChallenge": {
            "description": "`Bearer realm=\"portcullis\", error=\"invalid_token\"`",
            "required": true,
            "schema": {
              "type": "string"
            }
          },
          "BasicChallenge": {
            "description": "`Basic realm=\"portcullis\"`",
            "required": true,
            "schema": {
              "type": "string"
            }
          },
          "ETagUnlessDryRunCreate": {
            "description": "The stored document's version, e.g. `\"42\"` (absent from a dry run's answer when nothing is stored yet).",
            "required": false,
            "schema": {
              "type": "string"
            }
          }
        },
        "responses": {
          "OAuthBadRequest": {
            "description": "OAuth error (`invalid_request`, `invalid_grant`, `unauthorized_client`, `unsupported_grant_type`, `invalid_scope`, `invalid_resource`); an unknown tenant is `invalid_request` 90002.",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              },
              "Cache-Control": {
                "$ref": "#/components/headers/NoStore"
              },
              "Pragma": {
                "$ref": "#/components/headers/PragmaNoCache"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/OAuthError"
                }
              }
            }
          },
          "OAuthInvalidClient": {
            "description": "`invalid_client`: client authentication failed.",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              },
              "WWW-Authenticate": {
                "$ref": "#/components/headers/BasicChallenge"
              },
              "Cache-Control": {
                "$ref": "#/components/headers/NoStore"
              },
              "Pragma": {
                "$ref": "#/components/headers/PragmaNoCache"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/OAuthError"
                }
              }
            }
          },
          "OAuthUnavailable": {
            "description": "The store (or the password-hashing queue) cannot answer now; nothing was changed.",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              },
              "Retry-After": {
                "$ref": "#/components/headers/RetryAfter"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/OAuthUnavailable"
                }
              }
            }
          },
          "ServerError": {
            "description": "An unexpected error (`server_error`).",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/ServerError"
                }
              }
            }
          },
          "ServiceUnavailable": {
            "description": "The store cannot answer now (`temporarily_unavailable`); nothing was changed.",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              },
              "Retry-After": {
                "$ref": "#/components/headers/RetryAfter"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/ServerUnavailable"
                }
              }
            }
          },
          "ContentTooLarge": {
            "description": "The body exceeds 64 KiB (empty body).",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              }
            }
          },
          "ApiErrorBody": {
            "description": "The API error body (`{\"error\":{code,message,details?,correlationId}}`).",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/ApiError"
                }
              }
            }
          },
          "Unauthenticated": {
            "description": "No valid bearer access token for this API (`unauthenticated`).",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              },
              "WWW-Authenticate": {
                "$ref": "#/components/headers/BearerChallenge"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/ApiError"
                }
              }
            }
          },
          "Forbidden": {
            "$ref": "#/components/responses/ApiErrorBody",
            "description": "The token lacks the `Portcullis.Admin` app role (`forbidden`)."
          },
          "ComplianceForbidden": {
            "$ref": "#/components/responses/ApiErrorBody",
            "description": "An app-only token (`userTokenRequired`): compliance calls act for a user."
          },
          "ApiBadRequest": {
            "$ref": "#/components/responses/ApiErrorBody",
            "description": "`validationFailed` (every problem with its JSON Pointer), `malformedJSON` or `invalidIfMatch`."
          },
          "NotFound": {
            "$ref": "#/components/responses/ApiErrorBody",
            "description": "`notFound`"
          },
          "Conflict": {
            "$ref": "#/components/responses/ApiErrorBody",
            "description": "Conflict (`alreadyExists`, `inUse`, `nothingToWipe`)."
          },
          "PreconditionFailed": {
            "$ref": "#/components/responses/ApiErrorBody",
            "description": "`preconditionFailed`: the `If-Match` ETag is stale."
          },
          "PreconditionRequired": {
            "$ref": "#/components/responses/ApiErrorBody",
            "description": "`preconditionRequired`: `If-Match` (or, for a PUT that creates, `If-None-Match: *`) is missing."
          },
          "Metadata": {
            "description": "The metadata.",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              },
              "Cache-Control": {
                "$ref": "#/components/headers/PublicCache"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/DiscoveryDocument"
                }
              }
            }
          },
          "Deleted": {
            "description": "Deleted.",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              }
            }
          },
          "ConditionalAccessPolicy": {
            "description": "The conditional-access policy.",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              },
              "ETag": {
                "$ref": "#/components/headers/ETag"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/ConditionalAccessPolicy"
                }
              }
            }
          },
          "NamedLocation": {
            "description": "The named location.",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              },
              "ETag": {
                "$ref": "#/components/headers/ETag"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/NamedLocation"
                }
              }
            }
          },
          "AppProtectionPolicy": {
            "description": "The app protection policy.",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              },
              "ETag": {
                "$ref": "#/components/headers/ETag"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/AppProtectionPolicy"
                }
              }
            }
          },
          "EnrollmentResponse": {
            "description": "The enrollment's state.",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/EnrollmentResponse"
                }
              }
            }
          },
          "Page": {
            "description": "An HTML page (PROTOCOL §9.2): no JavaScript, no external assets, a CSRF token in every form.",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              },
              "Content-Security-Policy": {
                "description": "`default-src 'self'; frame-ancestors 'none'; …`",
                "schema": {
                  "type": "string"
                }
              }
            },
            "content": {
              "text/html": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "PageError": {
            "description": "An HTML error page showing the reason, its AADSTS code and the correlation ID (never a redirect).",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              },
              "Content-Security-Policy": {
                "description": "`default-src 'self'; frame-ancestors 'none'; …`",
                "schema": {
                  "type": "string"
                }
              }
            },
            "content": {
              "text/html": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "PageUnavailable": {
            "description": "The store or the password-hashing queue cannot answer now (HTML page from the pages, JSON otherwise).",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              }
            },
            "content": {
              "text/html": {
                "schema": {
                  "type": "string"
                }
              },
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/OAuthUnavailable"
                }
              }
            }
          },
          "Redirect": {
            "description": "A redirect to the client's registered redirect URI (with `code`, `state`, `client_info`, or `error`, `error_description`, `error_codes`, `state`) or to a registered post-logout URI.",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              },
              "Location": {
                "description": "Where the browser goes.",
                "required": true,
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "AppConfigurationPolicy": {
            "description": "The app configuration policy.",
            "headers": {
              "client-request-id": {
                "$ref": "#/components/headers/ClientRequestId"
              },
              "x-ms-request-id": {
                "$ref": "#/components/headers/MsRequestId"
              },
              "ETag": {
                "$ref": "#/components/headers/ETag"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/AppConfigurationPolicy"
                }
              }
            }
          },
          "MalformedRequest": {
            "description": "The request is not well-formed HTTP (a bad request line, header or framing): the HTTP layer answers 400 with no body and closes the connection. Any operation can answer it.",
            "headers": {}
          }
        }
      }
    }
    """#
}
