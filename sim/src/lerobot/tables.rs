//! The parquet files of a LeRobot dataset: frame data (several episodes per file, one row
//! group per episode, a new file past the size limit), the episodes table (with per-episode
//! statistics) and the tasks table (the task string as the pandas index).

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, Int64Builder, ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use super::columns::{hf_metadata, Column, Feature};
use super::stats::FeatureStats;
use super::{problem, Result};

/// `chunk-XXX/file-YYY` of a file index, `chunks_size` files per chunk.
pub fn chunk_file(index: usize, chunks_size: usize) -> (usize, usize) {
    (index / chunks_size, index % chunks_size)
}

pub fn chunk_path(root: &Path, dir: &str, index: usize, chunks_size: usize) -> PathBuf {
    let (chunk, file) = chunk_file(index, chunks_size);
    root.join(dir)
        .join(format!("chunk-{chunk:03}"))
        .join(format!("file-{file:03}.parquet"))
}

fn writer(path: &Path, schema: Arc<Schema>) -> Result<ArrowWriter<File>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| problem(path, e))?;
    }
    let file = File::create(path).map_err(|e| problem(path, e))?;
    let metadata = schema
        .metadata()
        .iter()
        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
        .collect();
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_key_value_metadata(Some(metadata))
        .build();
    ArrowWriter::try_new(file, schema, Some(props)).map_err(|e| problem(path, e))
}

/// Frame data files: whole episodes appended, a new file once the next episode would pass
/// `max_bytes`.
pub struct DataWriter {
    root: PathBuf,
    schema: Arc<Schema>,
    chunks_size: usize,
    max_bytes: usize,
    file_index: usize,
    bytes: usize,
    current: Option<(PathBuf, ArrowWriter<File>)>,
}

impl std::fmt::Debug for DataWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataWriter")
            .field("root", &self.root)
            .field("file_index", &self.file_index)
            .finish_non_exhaustive()
    }
}

impl DataWriter {
    pub fn new(root: &Path, features: &[Feature], chunks_size: usize, max_bytes: usize) -> Self {
        let fields: Vec<Field> = features.iter().map(Feature::arrow_field).collect();
        let metadata = HashMap::from([("huggingface".to_owned(), hf_metadata(features))]);
        DataWriter {
            root: root.to_owned(),
            schema: Arc::new(Schema::new_with_metadata(fields, metadata)),
            chunks_size,
            max_bytes,
            file_index: 0,
            bytes: 0,
            current: None,
        }
    }

    /// Appends one episode's columns (in feature order) as one row group; returns the file
    /// index it went to.
    pub fn append(&mut self, columns: &[Column]) -> Result<usize> {
        let size: usize = columns.iter().map(Column::byte_estimate).sum();
        if self.current.is_some() && self.bytes + size > self.max_bytes {
            self.finish_file()?;
            self.file_index += 1;
        }
        if self.current.is_none() {
            let path = chunk_path(&self.root, "data", self.file_index, self.chunks_size);
            self.current = Some((path.clone(), writer(&path, self.schema.clone())?));
            self.bytes = 0;
        }
        let arrays: Vec<ArrayRef> = columns.iter().map(Column::to_arrow).collect();
        if let Some((path, w)) = &mut self.current {
            let batch =
                RecordBatch::try_new(self.schema.clone(), arrays).map_err(|e| problem(path, e))?;
            w.write(&batch).map_err(|e| problem(path, e))?;
            w.flush().map_err(|e| problem(path, e))?;
        }
        self.bytes += size;
        Ok(self.file_index)
    }

    fn finish_file(&mut self) -> Result<()> {
        if let Some((path, w)) = self.current.take() {
            w.close().map_err(|e| problem(&path, e))?;
        }
        Ok(())
    }

    pub fn finish(mut self) -> Result<()> {
        self.finish_file()
    }
}

/// One row of the episodes table.
#[derive(Clone, Debug)]
pub struct EpisodeRow {
    pub task: String,
    pub length: usize,
    pub data_file: usize,
    pub from_index: usize,
    /// Statistics per feature, in feature order.
    pub stats: Vec<FeatureStats>,
}

fn list_f64(rows: impl Iterator<Item = Vec<f64>>) -> ArrayRef {
    let mut builder = ListBuilder::new(Float64Builder::new());
    for row in rows {
        builder.values().append_slice(&row);
        builder.append(true);
    }
    Arc::new(builder.finish())
}

/// Per-channel statistics as `list<list<list<double>>>` of shape `[c][1][1]`.
fn list_channels(rows: impl Iterator<Item = Vec<f64>>) -> ArrayRef {
    let inner = |v: f64| vec![v];
    let mut builder = ListBuilder::new(ListBuilder::new(ListBuilder::new(
        arrow_array::builder::Float64Builder::new(),
    )));
    for row in rows {
        for v in row {
            builder
                .values()
                .values()
                .append_value(inner(v).into_iter().map(Some));
            builder.values().append(true);
        }
        builder.append(true);
    }
    Arc::new(builder.finish())
}

/// The episodes table of `rows` (every episode; one file).
pub fn write_episodes(
    root: &Path,
    features: &[Feature],
    rows: &[EpisodeRow],
    chunks_size: usize,
) -> Result<()> {
    let path = chunk_path(root, "meta/episodes", 0, chunks_size);
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    let mut int = |name: &str, f: &dyn Fn(usize, &EpisodeRow) -> i64| {
        fields.push(Field::new(name, DataType::Int64, true));
        let column: Int64Array = rows
            .iter()
            .enumerate()
            .map(|(i, r)| Some(f(i, r)))
            .collect();
        arrays.push(Arc::new(column));
    };
    int("episode_index", &|i, _| i as i64);
    let (data_chunk, data_file) = (
        |r: &EpisodeRow| chunk_file(r.data_file, chunks_size).0 as i64,
        |r: &EpisodeRow| chunk_file(r.data_file, chunks_size).1 as i64,
    );
    int("length", &|_, r| r.length as i64);
    int("data/chunk_index", &|_, r| data_chunk(r));
    int("data/file_index", &|_, r| data_file(r));
    int("dataset_from_index", &|_, r| r.from_index as i64);
    int("dataset_to_index", &|_, r| (r.from_index + r.length) as i64);
    int("meta/episodes/chunk_index", &|_, _| 0);
    int("meta/episodes/file_index", &|_, _| 0);
    let mut tasks = ListBuilder::new(StringBuilder::new());
    for r in rows {
        tasks.values().append_value(&r.task);
        tasks.append(true);
    }
    let tasks_field = Field::new("item", DataType::Utf8, true);
    fields.insert(
        1,
        Field::new("tasks", DataType::List(Arc::new(tasks_field)), true),
    );
    arrays.insert(1, Arc::new(tasks.finish()));
    for (k, feature) in features.iter().enumerate() {
        let per_channel = rows.first().is_some_and(|r| r.stats[k].per_channel);
        for (s, (name, _)) in rows
            .first()
            .map(|r| r.stats[k].named())
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let column_name = format!("stats/{}/{name}", feature.name);
            let array = if *name == "count" {
                let mut b = ListBuilder::new(Int64Builder::new());
                for r in rows {
                    b.values().append_value(r.stats[k].count as i64);
                    b.append(true);
                }
                Arc::new(b.finish()) as ArrayRef
            } else if per_channel {
                list_channels(rows.iter().map(|r| r.stats[k].named()[s].1.clone()))
            } else {
                list_f64(rows.iter().map(|r| r.stats[k].named()[s].1.clone()))
            };
            fields.push(Field::new(column_name, array.data_type().clone(), true));
            arrays.push(array);
        }
    }
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), arrays).map_err(|e| problem(&path, e))?;
    let mut w = writer(&path, schema)?;
    w.write(&batch).map_err(|e| problem(&path, e))?;
    w.close().map_err(|e| problem(&path, e))?;
    Ok(())
}

/// `meta/tasks.parquet`: `task_index` and the task string, which pandas reads back as the
/// index (the `pandas` schema metadata; without it `item["task"]` would be a number).
pub fn write_tasks(root: &Path, tasks: &[String]) -> Result<()> {
    let path = root.join("meta").join("tasks.parquet");
    let pandas = serde_json::json!({
        "index_columns": ["task"],
        "column_indexes": [{"name": null, "field_name": null, "pandas_type": "unicode",
                            "numpy_type": "object", "metadata": {"encoding": "UTF-8"}}],
        "columns": [
            {"name": "task_index", "field_name": "task_index", "pandas_type": "int64",
             "numpy_type": "int64", "metadata": null},
            {"name": "task", "field_name": "task", "pandas_type": "unicode",
             "numpy_type": "object", "metadata": null}
        ],
        "creator": {"library": "coevolve", "version": env!("CARGO_PKG_VERSION")},
        "pandas_version": "2.3.3"
    });
    let schema = Arc::new(Schema::new_with_metadata(
        vec![
            Field::new("task_index", DataType::Int64, true),
            Field::new("task", DataType::Utf8, true),
        ],
        HashMap::from([("pandas".to_owned(), pandas.to_string())]),
    ));
    let index: Int64Array = (0..tasks.len() as i64).map(Some).collect();
    let names: StringArray = tasks.iter().map(|t| Some(t.as_str())).collect();
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(index), Arc::new(names)])
        .map_err(|e| problem(&path, e))?;
    let mut w = writer(&path, schema)?;
    w.write(&batch).map_err(|e| problem(&path, e))?;
    w.close().map_err(|e| problem(&path, e))?;
    Ok(())
}
