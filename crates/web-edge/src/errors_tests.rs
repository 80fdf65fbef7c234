use super::*;
use actix_web::body::MessageBody;

fn body_of(error: &ApiError, id: Option<&str>) -> (u16, serde_json::Value) {
    let response = error.render(id);
    let status = response.status().as_u16();
    let bytes = response
        .into_body()
        .try_into_bytes()
        .expect("a complete body");
    (status, serde_json::from_slice(&bytes).expect("JSON"))
}

#[test]
fn field_errors_list_every_field_with_details() {
    let mut errors = ValidationErrors::default();
    errors.push("amount", "must be a string");
    errors.push("requisites.phone", "is required");
    let (status, body) = body_of(&ApiError::InvalidFields(errors), None);
    assert_eq!(status, 400);
    assert_eq!(body["errorCode"], "InvalidRequest");
    assert_eq!(
        body["errorMessage"],
        "amount: must be a string; requisites.phone: is required"
    );
    assert_eq!(body["details"][1]["field"], "requisites.phone");
    assert_eq!(body["details"][1]["message"], "is required");
}

#[test]
fn other_errors_have_no_details_key() {
    for error in [
        ApiError::BadBody(Cow::Borrowed("body: is empty")),
        ApiError::Unauthorized,
        ApiError::NotFound,
        ApiError::DuplicateOperation,
        ApiError::Unavailable("db down".into()),
    ] {
        let (_, body) = body_of(&error, None);
        let object = body.as_object().expect("object");
        assert!(!object.contains_key("details"), "{error:?}");
        assert_eq!(object.len(), 2);
        assert!(!body["errorMessage"]
            .as_str()
            .unwrap_or("")
            .contains("db down"));
    }
}

#[test]
fn internal_errors_carry_the_correlation_id_and_nothing_internal() {
    let error = ApiError::Internal(anyhow::anyhow!("secret table broke"));
    let (status, body) = body_of(&error, Some("req-42"));
    assert_eq!(status, 500);
    assert_eq!(body["errorCode"], "InternalError");
    let message = body["errorMessage"].as_str().expect("message");
    assert!(message.contains("req-42"));
    assert!(!message.contains("secret"));
}

#[test]
fn too_many_requests_sets_retry_after() {
    let response = ApiError::TooManyRequests {
        retry_after_secs: 3,
    }
    .render(None);
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        response.headers().get(header::RETRY_AFTER),
        Some(&HeaderValue::from_static("3"))
    );
}

#[test]
fn framework_statuses_map_to_contract_codes() {
    assert_eq!(for_status(StatusCode::NOT_FOUND).code(), "NotFound");
    assert_eq!(
        for_status(StatusCode::METHOD_NOT_ALLOWED).code(),
        "MethodNotAllowed"
    );
    assert_eq!(
        for_status(StatusCode::PAYLOAD_TOO_LARGE).code(),
        "PayloadTooLarge"
    );
    assert_eq!(for_status(StatusCode::BAD_REQUEST).code(), "InvalidRequest");
    assert_eq!(for_status(StatusCode::BAD_GATEWAY).code(), "InternalError");
}
