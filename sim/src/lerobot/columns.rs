//! LeRobot features and their columns: the `info.json` description, the `datasets` Features
//! JSON, and the Arrow arrays the parquet files hold (vectors as `fixed_size_list<float>`,
//! shape-`[1]` features as plain scalars, images as `struct<bytes, path>` holding PNG files).

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, FixedSizeListArray, Float32Array, Int64Array, StringArray,
    StructArray,
};
use arrow_schema::{DataType, Field, Fields};
use serde_json::{json, Map, Value};

use super::stats::FeatureStats;

/// A feature's element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    Float32,
    Int64,
    Bool,
    /// A PNG image; `depth`: 16-bit millimetres (`is_depth_map`).
    Image {
        depth: bool,
    },
}

/// One feature of the dataset, as `meta/info.json` describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Feature {
    pub name: String,
    pub dtype: Dtype,
    /// `[n]` for vectors and scalars (n = 1), `[h, w, c]` for images.
    pub shape: Vec<usize>,
    pub names: Option<Vec<String>>,
}

impl Feature {
    pub fn vector(name: &str, names: Vec<String>) -> Self {
        Feature {
            name: name.to_owned(),
            dtype: Dtype::Float32,
            shape: vec![names.len()],
            names: Some(names),
        }
    }

    pub fn scalar(name: &str, dtype: Dtype) -> Self {
        Feature {
            name: name.to_owned(),
            dtype,
            shape: vec![1],
            names: None,
        }
    }

    pub fn image(name: &str, height: u32, width: u32, depth: bool) -> Self {
        Feature {
            name: name.to_owned(),
            dtype: Dtype::Image { depth },
            shape: vec![height as usize, width as usize, if depth { 1 } else { 3 }],
            names: Some(vec!["height".into(), "width".into(), "channels".into()]),
        }
    }

    fn dtype_name(&self) -> &'static str {
        match self.dtype {
            Dtype::Float32 => "float32",
            Dtype::Int64 => "int64",
            Dtype::Bool => "bool",
            Dtype::Image { .. } => "image",
        }
    }

    /// The `info.json` entry.
    pub fn info_json(&self) -> Value {
        let mut v = json!({"dtype": self.dtype_name(), "shape": self.shape, "names": self.names});
        if let Dtype::Image { depth } = self.dtype {
            v["info"] = if depth {
                json!({"is_depth_map": true, "depth_unit": "mm"})
            } else {
                json!({"is_depth_map": false})
            };
        }
        v
    }

    /// The `datasets` Features entry (the parquet files' `huggingface` metadata).
    fn hf_json(&self) -> Value {
        let value = |dtype: &str| json!({"dtype": dtype, "_type": "Value"});
        match (self.dtype, self.shape.as_slice()) {
            (Dtype::Image { .. }, _) => json!({"_type": "Image"}),
            (_, [1]) => value(self.dtype_name()),
            (_, shape) => json!({
                "feature": value(self.dtype_name()),
                "length": shape.iter().product::<usize>(),
                "_type": "List",
            }),
        }
    }

    pub fn arrow_field(&self) -> Field {
        let data_type = match (self.dtype, self.shape.as_slice()) {
            (Dtype::Image { .. }, _) => DataType::Struct(image_fields()),
            (Dtype::Float32, [1]) => DataType::Float32,
            (Dtype::Int64, _) => DataType::Int64,
            (Dtype::Bool, _) => DataType::Boolean,
            (Dtype::Float32, shape) => DataType::FixedSizeList(
                Arc::new(item_field()),
                shape.iter().product::<usize>() as i32,
            ),
        };
        Field::new(&self.name, data_type, true)
    }
}

fn item_field() -> Field {
    Field::new("item", DataType::Float32, true)
}

fn image_fields() -> Fields {
    Fields::from(vec![
        Field::new("bytes", DataType::Binary, true),
        Field::new("path", DataType::Utf8, true),
    ])
}

/// The `huggingface` schema metadata of a data file with these features.
pub fn hf_metadata(features: &[Feature]) -> String {
    let map: Map<String, Value> = features
        .iter()
        .map(|f| (f.name.clone(), f.hf_json()))
        .collect();
    json!({"info": {"features": map}}).to_string()
}

/// One feature's values over an episode's frames.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    /// Row-major, `dim` values per frame.
    Vectors {
        dim: usize,
        values: Vec<f32>,
    },
    Float32(Vec<f32>),
    Int64(Vec<i64>),
    Bool(Vec<bool>),
    /// PNG files, one per frame, with the statistics of their pixels (computed from the
    /// frames before encoding).
    Images {
        png: Vec<Vec<u8>>,
        stats: FeatureStats,
    },
}

impl Column {
    pub fn vectors<R: AsRef<[f32]>>(rows: &[R]) -> Self {
        let dim = rows.first().map_or(0, |r| r.as_ref().len());
        Column::Vectors {
            dim,
            values: rows
                .iter()
                .flat_map(|r| r.as_ref().iter().copied())
                .collect(),
        }
    }

    pub fn stats(&self) -> FeatureStats {
        match self {
            Column::Vectors { dim, values } => {
                let rows: Vec<&[f32]> = values.chunks_exact((*dim).max(1)).collect();
                FeatureStats::of_rows(&rows)
            }
            Column::Float32(v) => FeatureStats::of_scalars(v.iter().map(|&x| f64::from(x))),
            Column::Int64(v) => FeatureStats::of_scalars(v.iter().map(|&x| x as f64)),
            Column::Bool(v) => FeatureStats::of_scalars(v.iter().map(|&x| f64::from(u8::from(x)))),
            Column::Images { stats, .. } => stats.clone(),
        }
    }

    pub fn to_arrow(&self) -> ArrayRef {
        match self {
            Column::Vectors { dim, values } => Arc::new(FixedSizeListArray::new(
                Arc::new(item_field()),
                *dim as i32,
                Arc::new(Float32Array::from(values.clone())),
                None,
            )),
            Column::Float32(v) => Arc::new(Float32Array::from(v.clone())),
            Column::Int64(v) => Arc::new(Int64Array::from(v.clone())),
            Column::Bool(v) => Arc::new(BooleanArray::from(v.clone())),
            Column::Images { png, .. } => {
                let bytes: BinaryArray = png.iter().map(|b| Some(b.as_slice())).collect();
                let paths: StringArray = (0..png.len())
                    .map(|i| Some(format!("frame-{i:06}.png")))
                    .collect();
                Arc::new(StructArray::new(
                    image_fields(),
                    vec![Arc::new(bytes), Arc::new(paths)],
                    None,
                ))
            }
        }
    }

    /// Approximate bytes in a data file (for rolling over to a new file).
    pub fn byte_estimate(&self) -> usize {
        match self {
            Column::Vectors { values, .. } => values.len() * 4,
            Column::Float32(v) => v.len() * 4,
            Column::Int64(v) => v.len() * 8,
            Column::Bool(v) => v.len(),
            Column::Images { png, .. } => png.iter().map(|b| b.len() + 24).sum(),
        }
    }
}
