//! What a sandbox deposit asks of its user, per flow (the fixed parts docs/api.md lists under the sandbox).

use domain::operation::{Action, InputField, InstructionStep, CONFIRMATION_ATTEMPTS};
use domain::{Amount, Currency, KeptObject, OperationId};

use crate::rules::{sbp_banks, RECEIVING_BANK_NAME, RECEIVING_CARD_NUMBER, RECEIVING_HOLDER_NAME};

/// The hosted payment page of a deposit: `{public_url}/pay/{id}`.
pub fn pay_url(public_url: &str, id: OperationId) -> String {
    format!("{public_url}/pay/{id}")
}

/// The text of a deposit's QR code, the sandbox bank app page: `{public_url}/sandbox/qr/{id}`.
pub fn qr_target_url(public_url: &str, id: OperationId) -> String {
    format!("{public_url}/sandbox/qr/{id}")
}

/// Requisites holding the QR code as `qr`.
pub(crate) fn qr_requisites(data_uri: String) -> Action {
    Action::Requisites {
        requisites: KeptObject::new().with("qr", data_uri),
    }
}

/// The receiving card to pay to by hand.
pub(crate) fn card_requisites() -> Action {
    Action::Requisites {
        requisites: KeptObject::new()
            .with("cardNumber", RECEIVING_CARD_NUMBER)
            .with("bankName", RECEIVING_BANK_NAME)
            .with("holderName", RECEIVING_HOLDER_NAME),
    }
}

/// A `string` field for the payer's name and a `select` field for the bank.
pub(crate) fn input_fields() -> Action {
    Action::InputFields {
        fields: vec![
            InputField::text("payerName", "Payer name"),
            InputField::select("bank", "Bank", sbp_banks()),
        ],
    }
}

/// Steps to pay the deposit's amount by hand.
pub(crate) fn instruction(amount: Amount, currency: Currency, id: OperationId) -> Action {
    let step = |title: &str, description: String| InstructionStep {
        title: title.into(),
        description,
    };
    Action::Instruction {
        category: "DoPayment".into(),
        steps: vec![
            step(
                "Open your bank app",
                format!("Sign in to the app of any bank and choose a transfer to {RECEIVING_BANK_NAME}."),
            ),
            step(
                "Send the payment",
                format!(
                    "Transfer exactly {} {currency} to card {RECEIVING_CARD_NUMBER} \
                     ({RECEIVING_HOLDER_NAME}) with {id} as the payment purpose.",
                    amount.format(currency)
                ),
            ),
            step(
                "Wait for confirmation",
                "The payment is credited once the bank confirms it.".into(),
            ),
        ],
    }
}

/// A code sent by SMS, with the domain's number of attempts.
pub(crate) fn confirmation() -> Action {
    Action::Confirmation {
        channels: vec!["sms".into()],
        attempts_left: CONFIRMATION_ATTEMPTS,
    }
}
