//! How an action is stored in `operations.action`: JSON tagged by `kind`
//! (`{"kind":"redirect","url":...}`, `{"kind":"input_fields","fields":[{"type":"select",...}]}`).
//! The encoding is this adapter's own; the domain's `Action` knows nothing of it.

use domain::operation::{Action, InputField, InstructionStep, SelectOption};
use domain::KeptObject;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum ActionColumn {
    Redirect {
        url: String,
    },
    Requisites {
        requisites: KeptObject,
    },
    InputFields {
        fields: Vec<FieldColumn>,
    },
    Instruction {
        category: String,
        steps: Vec<StepColumn>,
    },
    Confirmation {
        channels: Vec<String>,
        attempts_left: u8,
    },
}

#[derive(Serialize, Deserialize)]
pub(crate) struct FieldColumn {
    name: String,
    label: String,
    #[serde(rename = "type")]
    kind: String,
    required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    options: Option<Vec<OptionColumn>>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct OptionColumn {
    value: String,
    label: String,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct StepColumn {
    title: String,
    description: String,
}

/// The `kind` an action is stored with (`redirect`, `requisites`, `input_fields`,
/// `instruction`, `confirmation`): what the console's events call it.
pub(crate) fn action_kind(action: &Action) -> &'static str {
    match action {
        Action::Redirect { .. } => "redirect",
        Action::Requisites { .. } => "requisites",
        Action::InputFields { .. } => "input_fields",
        Action::Instruction { .. } => "instruction",
        Action::Confirmation { .. } => "confirmation",
    }
}

impl From<&Action> for ActionColumn {
    fn from(action: &Action) -> Self {
        match action.clone() {
            Action::Redirect { url } => Self::Redirect { url },
            Action::Requisites { requisites } => Self::Requisites { requisites },
            Action::InputFields { fields } => Self::InputFields {
                fields: fields.into_iter().map(FieldColumn::from).collect(),
            },
            Action::Instruction { category, steps } => Self::Instruction {
                category,
                steps: steps
                    .into_iter()
                    .map(|s| StepColumn {
                        title: s.title,
                        description: s.description,
                    })
                    .collect(),
            },
            Action::Confirmation {
                channels,
                attempts_left,
            } => Self::Confirmation {
                channels,
                attempts_left,
            },
        }
    }
}

impl From<ActionColumn> for Action {
    fn from(column: ActionColumn) -> Self {
        match column {
            ActionColumn::Redirect { url } => Self::Redirect { url },
            ActionColumn::Requisites { requisites } => Self::Requisites { requisites },
            ActionColumn::InputFields { fields } => Self::InputFields {
                fields: fields.into_iter().map(InputField::from).collect(),
            },
            ActionColumn::Instruction { category, steps } => Self::Instruction {
                category,
                steps: steps
                    .into_iter()
                    .map(|s| InstructionStep {
                        title: s.title,
                        description: s.description,
                    })
                    .collect(),
            },
            ActionColumn::Confirmation {
                channels,
                attempts_left,
            } => Self::Confirmation {
                channels,
                attempts_left,
            },
        }
    }
}

impl From<InputField> for FieldColumn {
    fn from(field: InputField) -> Self {
        Self {
            name: field.name,
            label: field.label,
            kind: field.kind,
            required: field.required,
            options: field.options.map(|options| {
                options
                    .into_iter()
                    .map(|o| OptionColumn {
                        value: o.value,
                        label: o.label,
                    })
                    .collect()
            }),
        }
    }
}

impl From<FieldColumn> for InputField {
    fn from(field: FieldColumn) -> Self {
        Self {
            name: field.name,
            label: field.label,
            kind: field.kind,
            required: field.required,
            options: field.options.map(|options| {
                options
                    .into_iter()
                    .map(|o| SelectOption {
                        value: o.value,
                        label: o.label,
                    })
                    .collect()
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use domain::operation::CONFIRMATION_ATTEMPTS;

    use super::*;

    fn round_trip(action: &Action) -> serde_json::Value {
        let json = serde_json::to_value(ActionColumn::from(action)).unwrap();
        let back: ActionColumn = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(&Action::from(back), action);
        // The events name an action by the kind it is stored with.
        assert_eq!(json["kind"], action_kind(action));
        json
    }

    #[test]
    fn every_action_round_trips_through_its_stored_json() {
        let select = InputField::select("bank", "Bank", &[("a", "Bank A")]);
        let text = InputField::text("bank", "Bank");
        let json = round_trip(&Action::InputFields {
            fields: vec![select, text],
        });
        assert_eq!(json["kind"], "input_fields");
        assert_eq!(json["fields"][0]["type"], "select");
        assert!(json["fields"][1].get("options").is_none(), "not null");

        let json = round_trip(&Action::Confirmation {
            channels: vec!["sms".into()],
            attempts_left: CONFIRMATION_ATTEMPTS,
        });
        assert_eq!(json["kind"], "confirmation");
        assert_eq!(json["attempts_left"], 3);

        let json = round_trip(&Action::Requisites {
            requisites: KeptObject::new().with("qr", "data:image/png;base64,AA"),
        });
        assert_eq!(
            json,
            serde_json::json!({"kind": "requisites", "requisites": {"qr": "data:image/png;base64,AA"}})
        );
        round_trip(&Action::Redirect {
            url: "https://x.example/pay".into(),
        });
        round_trip(&Action::Instruction {
            category: "DoPayment".into(),
            steps: vec![InstructionStep {
                title: "t".into(),
                description: "d".into(),
            }],
        });
    }
}
